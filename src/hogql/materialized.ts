// Event properties that have a materialized column (see src/clickhouse/materialize.ts). The api
// process refreshes this map; the resolver reads `properties.x` of events from the column when
// `x` is in it, which skips scanning the key/value arrays.

let current: ReadonlyMap<string, string> = new Map()

/** Replaces the map of event properties that have a materialized column. */
export function setMaterializedProperties(map: ReadonlyMap<string, string>): void {
  current = map
}

/** The current map of event property → materialized column. */
export function materializedProperties(): ReadonlyMap<string, string> {
  return current
}

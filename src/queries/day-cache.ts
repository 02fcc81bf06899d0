import type { KV } from '@nats-io/kv'
import { z } from 'zod'
import { BUCKETS } from '../../schema/jetstream.ts'
import { type ClickHouseClient, selectRows } from '../clickhouse/client.ts'
import { loadMigrations } from '../clickhouse/migrate.ts'
import { bucket, type NatsConnection } from '../jetstream/connection.ts'
import { readDoc } from '../jetstream/kv-document.ts'
import type { Project } from '../accounts/documents.ts'
import type { CompiledQuery } from '../hogql/index.ts'
import { CHANGED_DAYS, type DayState, epochOf, readDayState, stillValid } from './day-state.ts'
import { SharedReads } from './shared-reads.ts'

// Values of closed chart buckets (a trends series' count for one closed day, hour, week or month),
// kept so that a dashboard asked again computes only today's bucket and the days that changed.
//
// A stored value is the answer for its bucket while nothing that could change it happened since it
// was computed, which one ClickHouse query reads before every use (day-state.ts readDayState):
// - inserts: the events_changed_days view (schema/clickhouse/0011) records, per insert block, each
//   (project, UTC day) it wrote and the server's time; a value is stale once any day its bucket
//   overlaps has a record at or after the value's `asOf`. A replay's table swap writes a record for
//   every project and day (ensureChangedDaysView).
// - what the view does not see, as an "epoch" every value carries and must still match: the
//   mutations of `events` (person deletion with events), the partitions of its bucket's months
//   (retention drops whole months; a partition by id and lowest block number, which merges keep
//   and a drop then new rows change; another month's partition appearing changes nothing), and the
//   project's person_overrides (a merge changes who a `dau` bucket counts). The `events` engine and
//   whether the view is attached are read too: the cache is off in cluster mode (a Distributed
//   `events`) and while the view is detached (after a swap, until re-created).
// `asOf` is the server's now() when the state was read, before the computation ran, less the age of
// the oldest INSERT running then: an insert in flight may already have its record while its rows
// are not yet visible to the computation, and its record then falls after `asOf`.
// Values live in the query cache's KV bucket (24 h expiry, refreshed whenever a series stores new
// values), one key per project and series definition; a lost race between two writers loses values,
// never mixes them.

/** One (period, series) of a query: the buckets it may take from, and store to, the cache. */
export interface BucketCell {
  /** `period|series`, as the statement tags its rows */
  id: string
  /** the series definition's hash: stored values are shared by every query with this series */
  series: string
  /** how many buckets the cell's range has */
  total: number
  /** closed buckets wholly inside the range: start text and the UTC days its events fall on */
  buckets: { start: string; days: string[] }[]
}

/** What a query kind that stores closed buckets' values provides (trends: insights/trends/buckets.ts). */
export interface BucketKind {
  /** the cells whose closed buckets may be stored, at `now`; undefined: none (the kind's usual path) */
  cells(query: unknown, project: Project, server: string, now: number): BucketCell[] | undefined
  /** the buckets the compiled statement left out, per cell id (facts.skipBuckets, as honoured) */
  skipped(compiled: CompiledQuery): Record<string, string[]> | undefined
  /** values per cell id and bucket start, read from the statement's rows */
  values(rows: unknown[][]): Map<string, Map<string, number>>
  /** the statement's rows that stored values stand for */
  rows(values: Map<string, Map<string, number>>): unknown[][]
}

/** A stored value: [value, asOf, epoch]. */
const StoredValue = z.tuple([z.number(), z.number(), z.string()])
const StoredDoc = z.object({ b: z.record(z.string(), StoredValue) })
export type StoredValues = Record<string, [number, number, string]>

/** At most this many buckets per series are kept (the newest): 90 days of hours fit. */
const MAX_VALUES = 4000

/** Closed buckets' values per project and series definition, in the query cache's KV bucket. */
export class DayValueStore {
  private constructor(private readonly kv: KV) {}

  static async open(nc: NatsConnection) {
    return new DayValueStore(await bucket(nc, BUCKETS.queryCache))
  }

  private key(teamId: number, series: string) {
    return `days.${teamId}.${series}`
  }

  /** The stored values of a series (bucket start text → value); empty when none or unreadable. */
  async get(teamId: number, series: string): Promise<StoredValues> {
    try {
      return ((await readDoc(this.kv, this.key(teamId, series), StoredDoc))?.doc.b ?? {}) as StoredValues
    } catch {
      return {}
    }
  }

  /** Adds `values` to what `before` held (the entry as read for this request) and writes it back. */
  async put(teamId: number, series: string, before: StoredValues, values: StoredValues): Promise<void> {
    const merged = { ...before, ...values }
    const keys = Object.keys(merged).sort()
    const kept = keys.slice(Math.max(0, keys.length - MAX_VALUES))
    const doc = { b: Object.fromEntries(kept.map((k) => [k, merged[k]!])) }
    await this.kv.put(this.key(teamId, series), JSON.stringify(doc))
  }
}

/**
 * Re-attaches the changed-days view to the current `events` (a RENAME swap leaves it on the old
 * table) and records that every day of every project
 * changed. Called after a replay swaps its tables in.
 */
export async function afterEventsSwap(ch: ClickHouseClient): Promise<void> {
  const [row] = await selectRows<{ attached: number | string }>(
    ch,
    `SELECT any(has(dependencies_table, '${CHANGED_DAYS.view}')) AS attached FROM system.tables` +
      " WHERE database = currentDatabase() AND name = 'events'",
  )
  if (Number(row?.attached ?? 0) !== 1) {
    await ch.command({ query: `DROP TABLE IF EXISTS ${CHANGED_DAYS.view}` })
    const ddl = loadMigrations()
      .flatMap((m) => m.statements)
      .find((st) => st.includes(`MATERIALIZED VIEW IF NOT EXISTS ${CHANGED_DAYS.view}`))
    if (!ddl) throw new Error(`no migration creates ${CHANGED_DAYS.view}`)
    await ch.command({ query: ddl })
  }
  await ch.command({
    query: `INSERT INTO ${CHANGED_DAYS.table} (team_id, day, at) SELECT -1, toDate('1970-01-01'), now()`,
  })
}

/** How one request used the stored values: the buckets it took and the ones it computed. */
export interface BucketUse {
  cached: number
  computed: number
}

/** One request's use of stored values: what to leave out of the statement, then what to add and keep. */
export interface BucketRun {
  /** for facts.skipBuckets */
  skip: Record<string, string[]>
  /** for facts.personOverrides (DayState.personOverrides) */
  personOverrides: boolean
  /**
   * The rows to shape (the statement's and the stored values' for what it left out), and `kept`:
   * the writes of the values of closed buckets it computed, under way (the caller waits for them
   * beside its own writes, before it answers).
   */
  finish(
    rows: unknown[][],
    compiled: CompiledQuery,
  ): Promise<{ rows: unknown[][]; use: BucketUse; kept: Promise<void> }>
}

/** Closed buckets' values for the query runner: reads the state and the store, keeps new values. */
export class DayCache {
  private opened: Promise<DayValueStore> | undefined
  /** State reads per project, each started after the requests it answers arrived (shared-reads.ts). */
  private readonly states: SharedReads<
    number,
    { first: string; last: string; markers: boolean },
    DayState | undefined
  >

  constructor(
    ch: ClickHouseClient,
    private readonly nc: NatsConnection,
  ) {
    this.states = new SharedReads(
      (teamId, days) => readDayState(ch, teamId, days.first, days.last, days.markers),
      {
        merge: (a, b) => ({
          first: a.first < b.first ? a.first : b.first,
          last: a.last > b.last ? a.last : b.last,
          markers: a.markers || b.markers,
        }),
      },
    )
  }

  /** The store, opened on first use (again after a failed open). */
  private store(): Promise<DayValueStore> {
    this.opened ??= DayValueStore.open(this.nc).catch((err: unknown) => {
      this.opened = undefined
      throw err
    })
    return this.opened
  }

  /**
   * Prepares a request of a kind with `kind.buckets`; `useStored` false (the force_ refresh modes)
   * computes every bucket and stores the closed ones. Undefined: nothing to do (no cell, cluster
   * mode, the state unreadable): the kind runs as before. Undefined at once (no promise) when the
   * query has no cell, which the caller knows before any read.
   */
  prepare(
    kind: BucketKind,
    project: Project,
    query: unknown,
    server: string,
    useStored: boolean,
  ): Promise<BucketRun | undefined> | undefined {
    let cells
    try {
      cells = kind.cells(query, project, server, Date.now())
    } catch {
      return undefined
    }
    const days = cells?.flatMap((c) => c.buckets.flatMap((b) => b.days)).sort()
    if (!cells || !days?.length) return undefined
    return this.prepareCells(kind, project, cells, days, useStored)
  }

  private async prepareCells(
    kind: BucketKind,
    project: Project,
    cells: BucketCell[],
    days: string[],
    useStored: boolean,
  ): Promise<BucketRun | undefined> {
    const seriesKeys = [...new Set(cells.map((c) => c.series))]
    // the stored values are read while the state is (they are checked against it after)
    const opening = this.store()
    const [state, store, stored] = await Promise.all([
      this.states.get(project.id, { first: days[0]!, last: days[days.length - 1]!, markers: useStored }),
      opening,
      opening.then(
        async (store) =>
          new Map(
            await Promise.all(seriesKeys.map(async (k) => [k, await store.get(project.id, k)] as const)),
          ),
      ),
    ])
    if (!state) return undefined
    const known = new Map<string, Map<string, number>>()
    if (useStored) {
      for (const cell of cells) {
        const values = stored.get(cell.series) ?? {}
        const m = new Map<string, number>()
        for (const b of cell.buckets) {
          const v = values[b.start]
          if (v && stillValid(v, b.days, state)) m.set(b.start, v[0])
        }
        if (m.size) known.set(cell.id, m)
      }
    }
    const skip = Object.fromEntries([...known].map(([id, m]) => [id, [...m.keys()]]))
    return {
      skip,
      personOverrides: state.personOverrides,
      finish: async (rows, compiled) => {
        const skipped = kind.skipped(compiled) ?? {}
        const used = new Map<string, Map<string, number>>()
        for (const [id, starts] of Object.entries(skipped)) {
          const m = known.get(id)
          used.set(id, new Map(starts.filter((s) => m?.has(s)).map((s) => [s, m!.get(s)!])))
        }
        const computed = kind.values(rows)
        const fresh = new Map<string, StoredValues>()
        let cached = 0
        let total = 0
        for (const cell of cells) {
          const left = new Set(skipped[cell.id] ?? [])
          cached += left.size
          total += cell.total
          const out = fresh.get(cell.series) ?? {}
          for (const b of cell.buckets) {
            if (left.has(b.start)) continue
            out[b.start] = [computed.get(cell.id)?.get(b.start) ?? 0, state.asOf, epochOf(state, b.days)]
          }
          fresh.set(cell.series, out)
        }
        const kept = Promise.all(
          [...fresh].map(([k, v]) =>
            Object.keys(v).length
              ? store.put(project.id, k, stored.get(k) ?? {}, v).catch(() => undefined)
              : undefined,
          ),
        ).then(() => undefined)
        return { rows: rows.concat(kind.rows(used)), use: { cached, computed: total - cached }, kept }
      },
    }
  }
}

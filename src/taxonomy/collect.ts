import { inferPropertyType, type PropertyType } from './infer.ts'

// What a batch of events adds to its projects' taxonomy (the event and property definitions,
// docs/taxonomy.md): the names this process has not written yet, and the event names whose
// `last_seen_at` was last written in an earlier hour. Everything else costs one Set lookup per
// property of an event and writes nothing, so a batch of known names is no write at all.
//
// Which names count, as PostHog's ingestion has them (plugin-server property-definitions-manager,
// rust property-defs-rs): an event's properties but $set, $set_once, $unset, $groups and $group_N
// (which only steer persons and groups) are event properties; the keys of its $set and $set_once
// are person properties; a $groupidentify adds only the keys of its $group_set, as properties of
// its group type. Names longer than 400 characters are skipped, as is $$plugin_metrics. The pairs
// (event, property) behind `event_names` leave out $feature/ and $feature_enrollment/ keys, which
// posthog-js puts on nearly every event (the property definitions keep them).

/** PostHog's PropertyDefinition.Type. */
export const PROPERTY_KIND = { event: 1, person: 2, group: 3 } as const

/** `typed` of a definition whose values gave no type yet: later than any typed row. */
export const UNTYPED_AT = Date.UTC(2105, 0, 1)

export interface EventDefinitionRow {
  team_id: number
  name: string
  created_at: number
  last_seen_at: number
}

export interface PropertyDefinitionRow {
  team_id: number
  type: number
  group_type_index: number
  name: string
  created_at: number
  /** when a type was first inferred and the type; UNTYPED_AT and '' when none was */
  typed: [number, PropertyType | '']
}

export interface EventPropertyRow {
  team_id: number
  event: string
  property: string
}

/** The rows a batch writes (all empty: nothing new). */
export interface TaxonomyRows {
  events: EventDefinitionRow[]
  properties: PropertyDefinitionRow[]
  eventProperties: EventPropertyRow[]
}

const NOT_SYNCED = new Set([
  '$set',
  '$set_once',
  '$unset',
  '$groups',
  '$group_0',
  '$group_1',
  '$group_2',
  '$group_3',
  '$group_4',
])
const NO_DEFINITION_EVENTS = new Set(['$$plugin_metrics'])
const MAX_NAME = 400
const HOUR_MS = 3_600_000
/** Per project, names remembered before the memory is emptied (they are then written again once). */
const MAX_KNOWN_PER_TEAM = 200_000

const fits = (s: string) => s.length <= MAX_NAME / 2 || [...s].length <= MAX_NAME
// Postgres refuses NUL in text, so PostHog stores U+FFFD instead; the names match its API's.
const sanitize = (s: string) => (s.includes('\u0000') ? s.replaceAll('\u0000', '\uFFFD') : s)

interface KnownEvent {
  /** the hour (ms / 1h) last_seen_at was last written in */
  hour: number
  /** properties of this event with nothing left to write: pair written, definition typed */
  done: Set<string>
  /** pairs (this event, property) written */
  pairs: Set<string>
  /** properties of this event paired and known without a type: only a typed value is news */
  untyped: Set<string>
}

interface KnownTeam {
  events: Map<string, KnownEvent>
  /** `<kind>/<group index>` → property name → typed (true) or written without a type (false) */
  props: Map<string, Map<string, boolean>>
  size: number
}

const propSpace = (type: number, groupTypeIndex: number) => `${type}/${groupTypeIndex}`
const EVENT_SPACE = propSpace(PROPERTY_KIND.event, -1)

type Typed = 0 | 1 | 2
const NONE = 0
const PENDING = 1
const WRITTEN = 2

const newKnownEvent = (hour: number): KnownEvent => ({
  hour,
  done: new Set(),
  pairs: new Set(),
  untyped: new Set(),
})

/** What this process wrote of its projects' taxonomy (one per projector process). */
export class TaxonomyCollector {
  private readonly teams = new Map<number, KnownTeam>()

  /** A new batch's collection. */
  begin(): TaxonomyBatch {
    return new TaxonomyBatch(this)
  }

  /** @internal the project's memory, emptied when it grew past MAX_KNOWN_PER_TEAM */
  team(teamId: number): KnownTeam {
    let t = this.teams.get(teamId)
    if (!t || t.size > MAX_KNOWN_PER_TEAM) {
      t = { events: new Map(), props: new Map(), size: 0 }
      this.teams.set(teamId, t)
    }
    return t
  }

  /** @internal after the rows of a batch were written: they are known from now on */
  remember(rows: TaxonomyRows): void {
    for (const e of rows.events) {
      const t = this.team(e.team_id)
      const known = t.events.get(e.name)
      const hour = Math.floor(e.last_seen_at / HOUR_MS)
      if (known) known.hour = Math.max(known.hour, hour)
      else {
        t.events.set(e.name, newKnownEvent(hour))
        t.size++
      }
    }
    for (const p of rows.properties) {
      const t = this.team(p.team_id)
      const space = propSpace(p.type, p.group_type_index)
      let m = t.props.get(space)
      if (!m) t.props.set(space, (m = new Map()))
      if (!m.has(p.name)) t.size++
      m.set(p.name, m.get(p.name) === true || p.typed[1] !== '')
    }
    for (const ep of rows.eventProperties) {
      const t = this.team(ep.team_id)
      let known = t.events.get(ep.event)
      if (!known) {
        known = newKnownEvent(-1)
        t.events.set(ep.event, known)
      }
      known.pairs.add(ep.property)
      t.size++
    }
  }
}

/** The taxonomy rows of one batch, gathered event by event (see `see`). */
export class TaxonomyBatch {
  private readonly events = new Map<string, EventDefinitionRow>()
  private readonly properties = new Map<string, PropertyDefinitionRow>()
  private readonly pairs = new Map<string, EventPropertyRow>()
  /** events new to the process, as this batch knows them (their `done`: settled in this batch) */
  private readonly fresh = new Map<string, KnownEvent>()
  /** per event the process knows: keys this batch already holds every row for */
  private readonly settled = new Map<KnownEvent, Set<string>>()

  constructor(private readonly known: TaxonomyCollector) {}

  /**
   * One event the projection keeps: `properties` as stored (after the person rules), `atMs` the
   * time capture received it (the same on every projection of the log, so a replay or a retried
   * batch writes the same rows), `groupTypeIndex` the index of a $groupidentify's group type.
   */
  see(
    teamId: number,
    rawEvent: string,
    properties: Record<string, unknown>,
    atMs: number,
    groupTypeIndex?: number | null,
  ): void {
    if (NO_DEFINITION_EVENTS.has(rawEvent) || !fits(rawEvent)) return
    const event = sanitize(rawEvent)
    const team = this.known.team(teamId)
    let known = team.events.get(event)
    const hour = Math.floor(atMs / HOUR_MS)
    if (!known || known.hour < hour) this.event(teamId, event, atMs)
    if (rawEvent === '$groupidentify') {
      const set = properties.$group_set
      if (groupTypeIndex !== undefined && groupTypeIndex !== null && isBag(set)) {
        this.bag(teamId, team, PROPERTY_KIND.group, groupTypeIndex, set, atMs)
      }
      return
    }
    if (!known) {
      // not written yet: this batch's own record of it, whose `done` is what the batch settled
      const k = `${teamId}\u0000${event}`
      known = this.fresh.get(k)
      if (!known) this.fresh.set(k, (known = newKnownEvent(-1)))
    }
    const { done, untyped } = known
    const settled = this.settled.get(known)
    for (const key in properties) {
      if (done.has(key) || settled?.has(key)) continue
      const value = properties[key]
      if ((value === null || typeof value === 'object') && untyped.has(key)) continue
      this.eventProperty(teamId, team, event, known, key, value, atMs)
    }
    const set = properties.$set
    if (isBag(set)) this.bag(teamId, team, PROPERTY_KIND.person, -1, set, atMs)
    const setOnce = properties.$set_once
    if (isBag(setOnce)) this.bag(teamId, team, PROPERTY_KIND.person, -1, setOnce, atMs)
  }

  /** The rows to write. */
  rows(): TaxonomyRows {
    return {
      events: [...this.events.values()],
      properties: [...this.properties.values()],
      eventProperties: [...this.pairs.values()],
    }
  }

  get empty(): boolean {
    return this.events.size === 0 && this.properties.size === 0 && this.pairs.size === 0
  }

  /** Call once the rows are in ClickHouse: later batches skip them. */
  written(rows: TaxonomyRows = this.rows()): void {
    this.known.remember(rows)
  }

  private event(teamId: number, name: string, atMs: number): void {
    const k = `${teamId}\u0000${name}`
    const row = this.events.get(k)
    if (!row) this.events.set(k, { team_id: teamId, name, created_at: atMs, last_seen_at: atMs })
    else {
      row.created_at = Math.min(row.created_at, atMs)
      row.last_seen_at = Math.max(row.last_seen_at, atMs)
    }
  }

  // A property of an event not settled for this event yet (slow path: a new key, an untyped one).
  private eventProperty(
    teamId: number,
    team: KnownTeam,
    event: string,
    known: KnownEvent,
    rawKey: string,
    value: unknown,
    atMs: number,
  ): void {
    if (NOT_SYNCED.has(rawKey) || !fits(rawKey)) {
      known.done.add(rawKey)
      return
    }
    const key = sanitize(rawKey)
    const typed = this.property(teamId, team, PROPERTY_KIND.event, -1, key, value, atMs)
    const fresh = team.events.get(event) !== known
    let paired = known.pairs.has(key)
    if (!paired && (key.startsWith('$feature/') || key.startsWith('$feature_enrollment/'))) {
      paired = true
    }
    if (!paired) {
      const k = `${teamId}\u0000${event}\u0000${key}`
      if (!this.pairs.has(k)) this.pairs.set(k, { team_id: teamId, event, property: key })
    }
    // Nothing more to learn from this key on this event: for good once its rows are written and its
    // type known; for the rest of this batch once the batch holds its typed rows.
    if (paired && typed === WRITTEN && !fresh) known.done.add(rawKey)
    else if (paired && !fresh && typed === NONE && team.props.get(EVENT_SPACE)?.get(key) === false) {
      known.untyped.add(rawKey)
    } else if (typed !== NONE) {
      if (fresh) known.done.add(rawKey)
      else {
        let s = this.settled.get(known)
        if (!s) this.settled.set(known, (s = new Set()))
        s.add(rawKey)
      }
    }
  }

  private bag(
    teamId: number,
    team: KnownTeam,
    type: number,
    groupTypeIndex: number,
    bag: Record<string, unknown>,
    atMs: number,
  ): void {
    for (const rawKey in bag) {
      if (!fits(rawKey)) continue
      this.property(teamId, team, type, groupTypeIndex, sanitize(rawKey), bag[rawKey], atMs)
    }
  }

  /**
   * Adds the definition's row if it is new, or still untyped and `value` types it. WRITTEN: typed
   * and written before; PENDING: typed by a row of this batch; NONE: no type yet.
   */
  private property(
    teamId: number,
    team: KnownTeam,
    type: number,
    groupTypeIndex: number,
    key: string,
    value: unknown,
    atMs: number,
  ): Typed {
    const space = propSpace(type, groupTypeIndex)
    const state = team.props.get(space)?.get(key)
    if (state === true) return WRITTEN
    const k = `${teamId}\u0000${space}\u0000${key}`
    const pending = this.properties.get(k)
    if (pending && pending.typed[1] !== '') return PENDING
    const inferred = inferPropertyType(value, key)
    // known untyped and still no type: nothing to write
    if (state === false && inferred === null) return NONE
    if (pending && inferred === null) return NONE
    this.properties.set(k, {
      team_id: teamId,
      type,
      group_type_index: groupTypeIndex,
      name: key,
      created_at: Math.min(pending?.created_at ?? atMs, atMs),
      typed: inferred === null ? [UNTYPED_AT, ''] : [atMs, inferred],
    })
    return inferred === null ? NONE : PENDING
  }
}

function isBag(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

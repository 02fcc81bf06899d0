import type { ClickHouseClient } from '@clickhouse/client'
import type { Subscription } from '@nats-io/transport-node'
import { selectRows } from '../clickhouse/client.ts'
import type { NatsConnection } from '../jetstream/connection.ts'
import type { Logger } from '../observability/logger.ts'
import {
  PERSON_CHANGES_ALL,
  type PersonChanges,
  PersonChangesSchema,
  teamOfSubject,
} from '../persons/change-feed.ts'
import { personProperties } from './properties.ts'

// Stored person properties for flag evaluation, answered from memory.
//
// Why a per-project mirror rather than a TTL cache per distinct id: a flags request usually names a
// distinct id the cache has not seen (a new visitor, or one seen long ago), and a cache can only answer
// a miss by asking ClickHouse, which is what cost ~10 ms a request. A mirror that holds a project's whole
// distinct id → person → properties map answers a miss too ("no such person": `{}`), so no request
// waits for ClickHouse once the project is loaded.
//
// How it stays fresh: the projector publishes each batch's person changes after ClickHouse has them
// (src/persons/change-feed.ts); the mirror applies them by version, as the ReplacingMergeTree does, so
// order does not matter. The feed is at-most-once, so the mirror is also rebuilt from ClickHouse every
// `refreshMs` (in the background, the old copy answering meanwhile) and dropped on every NATS
// reconnect. Changes that bypass the projector (deleting a person through the API) show after the
// next refresh.
//
// Projects with more than `maxDistinctIds` distinct ids are not mirrored (memory): their requests
// query ClickHouse as before.

type Properties = Record<string, unknown>

export interface PersonMirrorOptions {
  /** a project above this many distinct ids is read from ClickHouse per request */
  maxDistinctIds?: number
  /** rebuild a mirrored project from ClickHouse this often (catches lost feed messages) */
  refreshMs?: number
  /** forget projects not asked about for this long */
  idleMs?: number
}

interface Versioned<T> {
  version: number
  value: T
}

/** One project's persons as ClickHouse has them. */
export class TeamPersons {
  readonly ids = new Map<string, Versioned<{ person: string; deleted: boolean }>>()
  readonly persons = new Map<string, Versioned<{ props: Properties | string; deleted: boolean }>>()

  setId(distinctId: string, person: string, version: number, deleted: boolean): void {
    const cur = this.ids.get(distinctId)
    if (!cur || version >= cur.version) this.ids.set(distinctId, { version, value: { person, deleted } })
  }

  /** `props` may be the stored JSON text: parsed on first use (most persons are never asked about). */
  setPerson(id: string, version: number, deleted: boolean, props: Properties | string): void {
    const cur = this.persons.get(id)
    if (!cur || version >= cur.version) this.persons.set(id, { version, value: { props, deleted } })
  }

  apply(c: PersonChanges): void {
    for (const p of c.persons) this.setPerson(p.id, p.version, p.deleted, p.properties ?? {})
    for (const d of c.distinct_ids) this.setId(d.distinct_id, d.person_id, d.version, d.deleted)
  }

  /** The person's properties; `{}` for a distinct id without a (live) person. */
  properties(distinctId: string): Properties {
    const id = this.ids.get(distinctId)
    if (!id || id.value.deleted) return {}
    const p = this.persons.get(id.value.person)
    if (!p || p.value.deleted) return {}
    if (typeof p.value.props === 'string') p.value.props = parseProperties(p.value.props)
    return p.value.props
  }
}

function parseProperties(text: string): Properties {
  try {
    const v = JSON.parse(text) as unknown
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Properties) : {}
  } catch {
    return {}
  }
}

/**
 * Reads a project's persons whole; undefined when it has more than `max` distinct ids. Two plain
 * GROUP BY queries, joined here.
 */
export async function loadTeamPersons(
  ch: ClickHouseClient,
  teamId: number,
  max: number,
  into = new TeamPersons(),
): Promise<TeamPersons | undefined> {
  const team = String(Math.trunc(teamId))
  const ids = await selectRows<{ d: string; p: string; v: string; x: number }>(
    ch,
    `SELECT distinct_id AS d, argMax(person_id, version) AS p, max(version) AS v,
            argMax(is_deleted, version) AS x
     FROM person_distinct_id WHERE team_id = ${team} GROUP BY distinct_id LIMIT ${max + 1}`,
  )
  if (ids.length > max) return undefined
  const persons = await selectRows<{ id: string; props: string; v: string; x: number }>(
    ch,
    `SELECT id, argMax(properties, version) AS props, max(version) AS v, argMax(is_deleted, version) AS x
     FROM person WHERE team_id = ${team} GROUP BY id`,
  )
  for (const r of ids) into.setId(r.d, r.p, Number(r.v), Number(r.x) === 1)
  for (const r of persons) into.setPerson(r.id, Number(r.v), Number(r.x) === 1, r.props)
  return into
}

interface Entry {
  /** the copy answering now (undefined while the first load runs, or when the project is too big) */
  current?: TeamPersons
  tooBig: boolean
  loading?: Promise<void>
  /** a copy being rebuilt: feed messages go to it as well */
  next?: TeamPersons
  loadedAt: number
  usedAt: number
}

export class PersonMirror {
  private readonly teams = new Map<number, Entry>()
  private sub?: Subscription
  private readonly maxDistinctIds: number
  private readonly refreshMs: number
  private readonly idleMs: number
  /** feed messages applied, for tests */
  applied = 0

  constructor(
    private readonly ch: ClickHouseClient,
    private readonly log: Logger,
    opts: PersonMirrorOptions = {},
  ) {
    this.maxDistinctIds = opts.maxDistinctIds ?? 200_000
    this.refreshMs = opts.refreshMs ?? 60_000
    this.idleMs = opts.idleMs ?? 10 * 60_000
  }

  /** Subscribes to the change feed; must run before the first lookup so no change is missed. */
  start(nc: NatsConnection): void {
    this.sub = nc.subscribe(PERSON_CHANGES_ALL, {
      callback: (err, msg) => {
        if (err) return
        // Most messages are of projects nobody asked flags about here: their team is read from the
        // subject, and only a mirrored project's message is decoded (the projector publishes one
        // per batch that changed persons, with every changed person's properties).
        const team = teamOfSubject(msg.subject)
        if (team !== undefined && !this.teams.has(team)) return
        try {
          const c = PersonChangesSchema.parse(msg.json())
          const e = this.teams.get(c.team_id)
          if (!e) return
          e.current?.apply(c)
          e.next?.apply(c)
          this.applied++
        } catch (e) {
          this.log.warn({ err: e }, 'unreadable person change skipped')
        }
      },
    })
    // A disconnected subscriber misses messages: start over from ClickHouse.
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type === 'reconnect' || s.type === 'disconnect') this.teams.clear()
      }
    })().catch(() => undefined)
  }

  stop(): void {
    this.sub?.unsubscribe()
    this.teams.clear()
  }

  /** The stored properties of the person of `distinctId`; from memory once the project is loaded. */
  async properties(teamId: number, distinctId: string): Promise<Properties> {
    const now = Date.now()
    let e = this.teams.get(teamId)
    if (!e) {
      this.evictIdle(now)
      e = { tooBig: false, loadedAt: now, usedAt: now }
      this.teams.set(teamId, e)
      this.load(teamId, e)
    }
    e.usedAt = now
    if (!e.current && !e.tooBig && e.loading) await e.loading
    if (e.current) {
      if (now - e.loadedAt > this.refreshMs && !e.loading) this.load(teamId, e)
      return e.current.properties(distinctId)
    }
    if (e.tooBig && now - e.loadedAt > this.refreshMs && !e.loading) this.load(teamId, e)
    return personProperties(this.ch, teamId, distinctId)
  }

  private load(teamId: number, e: Entry): void {
    const next = new TeamPersons()
    e.next = next
    e.loading = loadTeamPersons(this.ch, teamId, this.maxDistinctIds, next)
      .then((loaded) => {
        if (this.teams.get(teamId) !== e) return
        e.current = loaded
        e.tooBig = loaded === undefined
        e.loadedAt = Date.now()
      })
      .catch((err: unknown) => {
        this.log.warn({ err, team_id: teamId }, 'person mirror load failed')
        // the next request tries again; this one reads ClickHouse directly
        if (!e.current && this.teams.get(teamId) === e) this.teams.delete(teamId)
        if (!e.current) throw err
      })
      .finally(() => {
        e.loading = undefined
        e.next = undefined
      })
    e.loading.catch(() => undefined)
  }

  private evictIdle(now: number): void {
    for (const [team, e] of this.teams) if (now - e.usedAt > this.idleMs) this.teams.delete(team)
  }
}

// Generated identity histories and the outcome a projection made of them, shared by the scale tests
// that compare several projector processes with one (test/system/scale/projectors.test.ts,
// test/integration/projectors/team-spread.test.ts).
import { v5 as uuidv5 } from 'uuid'
import { type ClickHouseClient, selectRows } from '../../src/clickhouse/client.ts'
import type { CapturedEvent } from '../../src/jetstream/messages.ts'

const NS = '6ba7b811-9dad-11d1-80b4-00c04fd430c8'
// PostHog's person id of a distinct id: uuid v5 of `<team>:<distinct id>` in this namespace
const PERSON_NS = '932979b4-65c3-4424-8467-0b66ec27bc22'
const personUuid = (team: number, d: string) => uuidv5(`${team}:${d}`, PERSON_NS)

/** An event of a history, its team filled in per run. */
export type HistoryEvent = Omit<CapturedEvent, 'team_id'>

/** A seeded PRNG (mulberry32): the same history for every run. */
function rng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = seed
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** One team's history: anonymous visits, then many merges ($identify, $create_alias, $merge_dangerously). */
export function history(seed: number, size = { events: 160, anon: 16, users: 6 }): HistoryEvent[] {
  const r = rng(seed)
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)]!
  const anon = Array.from({ length: size.anon }, (_, i) => `anon-${seed}-${i}`)
  const users = Array.from({ length: size.users }, (_, i) => `user-${seed}-${i}`)
  const out: HistoryEvent[] = []
  const t0 = Date.UTC(2024, 4, 1)
  for (let i = 0; i < size.events; i++) {
    const at = new Date(t0 + i * 1000).toISOString()
    const roll = r()
    let event = '$pageview'
    let distinct = pick(anon)
    const properties: Record<string, unknown> = { i, $set: { last: i, ['k' + (i % 5)]: i } }
    if (roll < 0.15) {
      event = '$identify'
      distinct = pick(users)
      properties.$anon_distinct_id = pick(anon)
    } else if (roll < 0.25) {
      event = '$create_alias'
      distinct = pick([...anon, ...users])
      properties.alias = pick(anon)
    } else if (roll < 0.3) {
      event = '$merge_dangerously'
      distinct = pick(users)
      properties.alias = pick(users)
    } else if (roll < 0.45) {
      distinct = pick(users)
    }
    out.push({
      uuid: uuidv5(`${seed}:${i}`, NS),
      event,
      distinct_id: distinct,
      properties,
      timestamp: at,
      now: at,
      sent_at: null,
      ip: null,
    })
  }
  return out
}

/** Events of `teams` stored (each once counted). */
export async function eventsStored(ch: ClickHouseClient, teams: number[]): Promise<number> {
  const r = await selectRows<{ n: string }>(
    ch,
    `SELECT count(DISTINCT uuid) AS n FROM events WHERE team_id IN (${teams.join(',')})`,
  )
  return Number(r[0]!.n)
}

/** A team's outcome with person ids replaced by the person's smallest distinct id. */
export async function outcome(ch: ClickHouseClient, team: number, events: HistoryEvent[]) {
  // a person's id is derived from the team and the distinct id that created it: named by that id
  const created = new Map(
    events
      .flatMap((e) => [
        e.distinct_id,
        String(e.properties.alias ?? e.properties.$anon_distinct_id ?? e.distinct_id),
      ])
      .map((d) => [personUuid(team, d), d]),
  )
  const ids = await selectRows<{ distinct_id: string; person_id: string }>(
    ch,
    `SELECT distinct_id, person_id FROM person_distinct_id FINAL WHERE team_id = ${team} AND is_deleted = 0`,
  )
  const byPerson = new Map<string, string[]>()
  for (const r of ids) byPerson.set(r.person_id, [...(byPerson.get(r.person_id) ?? []), r.distinct_id])
  const name = (pid: string) => (byPerson.get(pid) ?? [`?${pid}`]).sort()[0]!
  const persons = await selectRows<{ id: string; properties: string; is_identified: number }>(
    ch,
    `SELECT id, properties, is_identified FROM person FINAL WHERE team_id = ${team} AND is_deleted = 0`,
  )
  const overrides = await selectRows<{ old_person_id: string; override_person_id: string }>(
    ch,
    `SELECT old_person_id, override_person_id FROM person_overrides FINAL WHERE team_id = ${team}`,
  )
  const override = new Map(overrides.map((o) => [o.old_person_id, o.override_person_id]))
  const rows = await selectRows<{ uuid: string; person_id: string }>(
    ch,
    `SELECT uuid, person_id FROM events FINAL WHERE team_id = ${team} ORDER BY uuid`,
  )
  return {
    persons: persons
      .map((p) =>
        JSON.stringify([(byPerson.get(p.id) ?? []).sort(), JSON.parse(p.properties), p.is_identified]),
      )
      .sort(),
    overrides: overrides
      .map((o) => `${created.get(o.old_person_id) ?? o.old_person_id}>${name(o.override_person_id)}`)
      .sort(),
    events: rows.map((e) => `${e.uuid}:${name(override.get(e.person_id) ?? e.person_id)}`),
  }
}

import { v5 as uuidv5 } from 'uuid'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TeamPersons } from '../../../src/flags/person-mirror.ts'
import { personChangesSubject, PersonChangesSchema } from '../../../src/persons/change-feed.ts'
import type { RunningProjector } from '../../../src/projectors/index.ts'
import { clickhouse, createTestProject, nats } from '../../harness/index.ts'
import {
  distinctIds,
  ev,
  eventPersons,
  PERSON_NAMESPACE,
  persons,
  rows,
  runProjector,
  type TestLog,
  testLog,
  waitIdle,
} from './helpers.ts'

// Person rules end to end: events go into the log, the projector applies PostHog's rules, and the
// ClickHouse views are read back. Expected person ids are worked out by hand from the rule that a new
// person's uuid is uuidv5("<team>:<distinct_id>", PostHog's person namespace).

const ch = clickhouse()
let log: TestLog
let projector: RunningProjector
const teams: number[] = []
const pid = (team: number, distinctId: string) => uuidv5(`${team}:${distinctId}`, PERSON_NAMESPACE)

async function newTeam(name: string) {
  const id = (await createTestProject(name)).id
  teams.push(id)
  return id
}

let projectedTeams: Set<number>
beforeAll(async () => {
  log = await testLog(await nats())
  projectedTeams = new Set()
  projector = await runProjector(log, ch, [], { teams: projectedTeams })
})
afterAll(async () => {
  await projector?.stop()
})

async function send(team: number, ...events: ReturnType<typeof ev>[]) {
  projectedTeams.add(team)
  // one chunk per event: the order across chunks is the log order
  for (const e of events) await log.publish('live', [e])
  await waitIdle(log, projector)
}

describe('persons', () => {
  it('announces written person changes on the feed: applied in order they mirror ClickHouse', async () => {
    const t = await newTeam('feed')
    const mirror = new TeamPersons()
    const sub = log.nc.subscribe(personChangesSubject(t), {
      callback: (_err, msg) => mirror.apply(PersonChangesSchema.parse(msg.json())),
    })
    await log.nc.flush()
    await send(
      t,
      ev(t, '$pageview', 'anon-f', { $set: { from_anon: true, both: 'anon' } }),
      ev(t, '$pageview', 'user-f', { $set: { from_user: true } }),
      ev(t, '$identify', 'user-f', { $anon_distinct_id: 'anon-f', $set: { email: 'f@x.io' } }),
    )
    await log.nc.flush()
    const stored = await persons(ch, t)
    const ids = await distinctIds(ch, t)
    sub.unsubscribe()
    const live = stored.filter((p) => p.is_deleted === 0)
    expect(live).toHaveLength(1)
    for (const d of ['anon-f', 'user-f']) {
      expect(ids[d]).toBe(live[0]!.id)
      expect(mirror.properties(d)).toEqual(live[0]!.properties)
    }
    expect(mirror.properties('never-seen')).toEqual({})
  })

  it('$identify adds the identified id to the anonymous person and marks it identified', async () => {
    const t = await newTeam('identify')
    await send(
      t,
      ev(t, '$pageview', 'anon-a', { $set: { a: 1 } }),
      ev(t, '$identify', 'user-a', { $anon_distinct_id: 'anon-a', $set: { email: 'a@x.io' } }),
      ev(t, '$pageview', 'user-a'),
    )
    const P = pid(t, 'anon-a')
    expect((await eventPersons(ch, t)).map((e) => [e.distinct_id, e.stamped])).toEqual([
      ['anon-a', P],
      ['user-a', P],
      ['user-a', P],
    ])
    const [person] = await persons(ch, t)
    expect(person).toMatchObject({ id: P, is_identified: 1, is_deleted: 0 })
    expect(person!.properties).toMatchObject({ a: 1, email: 'a@x.io' })
    expect(await distinctIds(ch, t)).toEqual({ 'anon-a': P, 'user-a': P })
  })

  it('$identify merging two persons deletes the anonymous one and overrides its events', async () => {
    const t = await newTeam('merge')
    await send(
      t,
      ev(t, '$pageview', 'anon-b', { $set: { from_anon: true, both: 'anon' } }),
      ev(t, '$pageview', 'user-b', { $set: { from_user: true, both: 'user' } }),
      ev(t, '$identify', 'user-b', { $anon_distinct_id: 'anon-b' }),
    )
    const P1 = pid(t, 'anon-b')
    const P2 = pid(t, 'user-b')
    const events = await eventPersons(ch, t)
    // stamped with the person current at projection, attributed to the survivor through the override
    expect(events.map((e) => [e.distinct_id, e.stamped, e.person])).toEqual([
      ['anon-b', P1, P2],
      ['user-b', P2, P2],
      ['user-b', P2, P2],
    ])
    const ps = await persons(ch, t)
    const survivor = ps.find((p) => p.id === P2)!
    expect(ps.find((p) => p.id === P1)!.is_deleted).toBe(1)
    expect(survivor).toMatchObject({ is_identified: 1, is_deleted: 0 })
    // on conflicts the surviving (identified) person's values win
    expect(survivor.properties).toMatchObject({ from_anon: true, from_user: true, both: 'user' })
    expect(await distinctIds(ch, t)).toEqual({ 'anon-b': P2, 'user-b': P2 })
  })

  it('follows a merge chain anon -> identified -> aliased, and an alias that merges another person', async () => {
    const t = await newTeam('chain')
    await send(
      t,
      ev(t, '$pageview', 'anon-c'),
      ev(t, '$identify', 'user-c', { $anon_distinct_id: 'anon-c' }),
      ev(t, '$create_alias', 'user-c', { alias: 'alias-c' }),
      ev(t, '$pageview', 'alias-c'),
      ev(t, '$pageview', 'anon-c2'),
      ev(t, '$create_alias', 'user-c', { alias: 'anon-c2' }),
      ev(t, '$pageview', 'anon-c2'),
    )
    const P = pid(t, 'anon-c')
    const Q = pid(t, 'anon-c2')
    const events = await eventPersons(ch, t)
    expect(events.map((e) => [e.event, e.distinct_id, e.stamped])).toEqual([
      ['$pageview', 'anon-c', P],
      ['$identify', 'user-c', P],
      ['$create_alias', 'user-c', P],
      ['$pageview', 'alias-c', P],
      ['$pageview', 'anon-c2', Q],
      ['$create_alias', 'user-c', P],
      ['$pageview', 'anon-c2', P],
    ])
    expect(new Set(events.map((e) => e.person))).toEqual(new Set([P]))
    expect(await distinctIds(ch, t)).toEqual({ 'anon-c': P, 'user-c': P, 'alias-c': P, 'anon-c2': P })
  })

  it('does not merge an already identified person, nor illegal ids like "anonymous"', async () => {
    const t = await newTeam('guards')
    await send(
      t,
      ev(t, '$identify', 'user-d1', { $anon_distinct_id: 'anon-d1' }),
      ev(t, '$pageview', 'user-d2'),
      ev(t, '$identify', 'user-d2', { $anon_distinct_id: 'user-d1' }),
      ev(t, '$pageview', 'anonymous'),
      ev(t, '$identify', 'user-e', { $anon_distinct_id: 'anonymous' }),
    )
    const ids = await distinctIds(ch, t)
    expect(ids['user-d1']).toBe(pid(t, 'user-d1'))
    expect(ids['anon-d1']).toBe(pid(t, 'user-d1'))
    expect(ids['user-d2']).toBe(pid(t, 'user-d2'))
    expect(ids.anonymous).toBe(pid(t, 'anonymous'))
    expect(ids['user-e']).toBe(pid(t, 'user-e'))
    const [{ n }] = (await rows<{ n: string }>(
      ch,
      `SELECT count() AS n FROM person_overrides WHERE team_id = ${t}`,
    )) as [{ n: string }]
    expect(Number(n)).toBe(0)
  })

  it('applies $set, $set_once and $unset in log order', async () => {
    const t = await newTeam('props')
    await send(
      t,
      ev(t, 'e1', 'props-f', { $set: { a: 1, b: 1 }, $set_once: { c: 1 } }),
      ev(t, 'e2', 'props-f', { $set_once: { a: 2, d: 2 }, $set: { b: 2 } }),
      ev(t, 'e3', 'props-f', { $unset: ['b'] }),
      ev(t, 'e4', 'props-f', { $set: { e: 1 }, $set_once: { e: 0 } }),
    )
    const [person] = await persons(ch, t)
    const { $creator_event_uuid: _, ...props } = person!.properties
    expect(props).toEqual({ a: 1, c: 1, d: 2, e: 1 })
    const perEvent = await rows<{ event: string; person_properties: string }>(
      ch,
      `SELECT event, person_properties FROM events WHERE team_id = ${t} ORDER BY event`,
    )
    const snapshot = (i: number) => {
      const { $creator_event_uuid: _c, ...rest } = JSON.parse(perEvent[i]!.person_properties)
      return rest
    }
    expect(snapshot(0)).toEqual({ a: 1, b: 1, c: 1 })
    expect(snapshot(1)).toEqual({ a: 1, b: 2, c: 1, d: 2 })
    expect(snapshot(2)).toEqual({ a: 1, c: 1, d: 2 })
    expect(snapshot(3)).toEqual({ a: 1, c: 1, d: 2, e: 1 })
  })

  it('writes no person row for a pageview that only moves to another page (PostHog filters it)', async () => {
    const t = await newTeam('filtered')
    const page = (path: string, extra: Record<string, unknown> = {}) =>
      ev(t, '$pageview', 'visitor', { $current_url: `https://a.test${path}`, $pathname: path, ...extra })
    await send(t, page('/'), page('/pricing'), page('/docs'))
    const [first] = await persons(ch, t)
    expect(first).toMatchObject({ version: 0 })
    expect(first!.properties).toMatchObject({ $current_url: 'https://a.test/', $initial_pathname: '/' })
    const count = async () =>
      Number((await rows<{ n: string }>(ch, `SELECT count() AS n FROM person WHERE team_id = ${t}`))[0]!.n)
    expect(await count()).toBe(1)
    // each event still shows its own page
    const shown = await rows<{ url: string }>(
      ch,
      `SELECT visitParamExtractString(person_properties, '$current_url') AS url FROM events
       WHERE team_id = ${t} ORDER BY timestamp`,
    )
    expect(shown.map((r) => r.url)).toEqual([
      'https://a.test/',
      'https://a.test/pricing',
      'https://a.test/docs',
    ])

    // a change PostHog keeps (a campaign parameter) takes the page with it
    await send(t, page('/signup', { utm_source: 'news' }))
    const [after] = await persons(ch, t)
    // (version 1 says one row was written since: `person` is a ReplacingMergeTree, so a count of its
    // rows may already be 1 again once a background merge replaced version 0)
    expect(after).toMatchObject({ version: 1 })
    expect(after!.properties).toMatchObject({ $current_url: 'https://a.test/signup', utm_source: 'news' })
  })

  it('stores personless events under a deterministic id without a person, and links them on identify', async () => {
    const t = await newTeam('personless')
    await send(
      t,
      ev(t, '$pageview', 'pl-g', { $process_person_profile: false, $set: { ignored: true } }),
      ev(t, '$identify', 'user-g', { $anon_distinct_id: 'pl-g' }),
      ev(t, '$pageview', 'pl-g2', { $process_person_profile: false }),
      ev(t, '$pageview', 'user-g2'),
      ev(t, '$identify', 'user-g2', { $anon_distinct_id: 'pl-g2' }),
    )
    const events = await eventPersons(ch, t)
    const G = pid(t, 'pl-g')
    const G2 = pid(t, 'user-g2')
    // the first personless id already stamped its events: the identified person takes its uuid
    expect(events.map((e) => [e.distinct_id, e.stamped, e.person])).toEqual([
      ['pl-g', G, G],
      ['user-g', G, G],
      ['pl-g2', pid(t, 'pl-g2'), G2],
      ['user-g2', G2, G2],
      ['user-g2', G2, G2],
    ])
    const first = await rows<{ person_properties: string; properties: string }>(
      ch,
      `SELECT person_properties, properties FROM events WHERE team_id = ${t} AND distinct_id = 'pl-g'`,
    )
    expect(JSON.parse(first[0]!.person_properties)).toEqual({})
    expect(JSON.parse(first[0]!.properties).$set).toBeUndefined()
    const ps = await persons(ch, t)
    expect(ps.map((p) => p.id).sort()).toEqual([G, G2].sort())
    expect(ps.find((p) => p.id === G)!.properties.ignored).toBeUndefined()
  })
})

describe('groups', () => {
  it('$groupidentify creates and updates groups; $groups fills $group_N but creates no group', async () => {
    const t = await newTeam('groups')
    await send(
      t,
      ev(t, '$groupidentify', 'grp-user', {
        $group_type: 'company',
        $group_key: 'acme',
        $group_set: { name: 'Acme' },
      }),
      ev(t, '$pageview', 'grp-user', { $groups: { company: 'acme', project: 'p1' } }),
      ev(t, '$groupidentify', 'grp-user', {
        $group_type: 'company',
        $group_key: 'acme',
        $group_set: { plan: 'pro' },
      }),
      ev(t, 'many', 'grp-user', { $groups: { t3: 'x', t4: 'y', t5: 'z', t6: 'w' } }),
    )
    const types = await rows<{ group_type: string; group_type_index: number }>(
      ch,
      `SELECT group_type, group_type_index FROM group_type_mapping WHERE team_id = ${t} ORDER BY group_type_index`,
    )
    expect(types).toEqual([
      { group_type: 'company', group_type_index: 0 },
      { group_type: 'project', group_type_index: 1 },
      { group_type: 't3', group_type_index: 2 },
      { group_type: 't4', group_type_index: 3 },
      { group_type: 't5', group_type_index: 4 },
    ])
    const groups = await rows<{ group_type_index: number; group_key: string; properties: string; v: string }>(
      ch,
      `SELECT group_type_index, group_key, argMax(properties, version) AS properties, max(version) AS v
       FROM groups WHERE team_id = ${t} GROUP BY group_type_index, group_key`,
    )
    expect(groups).toHaveLength(1)
    expect(groups[0]).toMatchObject({ group_type_index: 0, group_key: 'acme' })
    expect(JSON.parse(groups[0]!.properties)).toEqual({ name: 'Acme', plan: 'pro' })
    const cols = await rows<Record<string, string>>(
      ch,
      `SELECT event, "$group_0", "$group_1", "$group_2", "$group_3", "$group_4" FROM events
       WHERE team_id = ${t} AND event IN ('$pageview', 'many') ORDER BY event`,
    )
    expect(cols).toEqual([
      { event: '$pageview', $group_0: 'acme', $group_1: 'p1', $group_2: '', $group_3: '', $group_4: '' },
      { event: 'many', $group_0: '', $group_1: '', $group_2: 'x', $group_3: 'y', $group_4: 'z' },
    ])
  })
})

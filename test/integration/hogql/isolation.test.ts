// Adversarial suite for issue 22 item 1: a user expression is never evaluated on another project's
// row. Two worlds, each an attacker project B beside a victim project A whose rows share B's parts
// and granules (one insert per table per world):
//   poisoned: A's values make the attack expressions fail (division by zero, bad patterns, text that
//             is no number) and carry secrets;
//   benign:   A's values make them succeed.
// B's data is the same in both worlds. Every attack must get the same status and the same answer in
// both worlds, and no answer may carry A's secrets: whatever A holds, B learns nothing from it. A
// control shows that the same expressions, under a guard written the old way (team_id in the same
// WHERE), do tell the worlds apart on this server, so the suite is not passing for want of data.
import { v4 as uuidv4 } from 'uuid'
import { beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import type { ClickHouseClient } from '../../../src/clickhouse/client.ts'
import { compileHogQL } from '../../../src/hogql/index.ts'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import { api, clickhouse, createTestKey, createTestProject, startTestBurrow } from '../../harness/index.ts'
import { insertDistinctIds, insertEvents, insertGroups, insertOverrides, insertPersons } from './fixtures.ts'

const ch = clickhouse()
let burrow: RunningBurrow

interface World {
  victim: Project
  attacker: Project
  call: ReturnType<typeof api>
}
const worlds: Record<'poisoned' | 'benign', World> = {} as never

// Strings only the poisoned victim holds; no attack text contains them.
const SECRETS = /secret-A-0|a-secret-flag|hunter2|\(unclosed/

const PB = '00000000-0000-4000-8000-0000000000b1'
const PB_OLD = '00000000-0000-4000-8000-0000000000b2'
const PA = '00000000-0000-4000-8000-0000000000a1'
const PA_OLD = '00000000-0000-4000-8000-0000000000a2'
const TS = '2024-03-01 10:00:00.000'

/** A's values: poisoned ones break conversions, divisions and patterns; benign ones do not. */
function victimValues(poisoned: boolean) {
  return poisoned
    ? {
        distinctId: 'alice-secret-A-0',
        event: 'secret-event-hunter2',
        email: 'alice-secret-A-0@a.com',
        flag: 'a-secret-flag',
        n: 'hunter2',
        d: 'hunter2-date',
        u: 'hunter2-uuid',
        pat: '(unclosed-secret-A-0',
        group: 'alice-secret-A-0',
      }
    : {
        distinctId: 'bob-benign',
        event: '2024-03-05',
        email: 'bob@a.com',
        flag: 'benign-flag',
        n: '7',
        d: '2024-03-07',
        u: '00000000-0000-4000-8000-000000000777',
        pat: 'x',
        group: 'bob-group',
      }
}

async function seed(victim: number, attacker: number, poisoned: boolean): Promise<void> {
  const a = victimValues(poisoned)
  const ev = (
    team: number,
    event: string,
    distinctId: string,
    personId: string,
    props: Record<string, unknown>,
  ) => ({
    team,
    uuid: uuidv4(),
    event,
    distinctId,
    personId,
    timestamp: TS,
    properties: props,
    groups: [team === victim ? a.group : 'b-group'],
  })
  const aProps = { n: a.n, d: a.d, u: a.u, pat: a.pat, secret: 'hunter2', [`$feature/${a.flag}`]: a.n }
  const bProps = {
    n: '1',
    d: '2024-03-01',
    u: '00000000-0000-4000-8000-000000000001',
    pat: 'b',
    '$feature/b-flag': 'true',
  }
  await insertEvents(ch, [
    ev(victim, a.event, a.distinctId, PA_OLD, aProps),
    ev(victim, '$feature_flag_called', a.distinctId, PA, {
      $feature_flag: a.flag,
      $feature_flag_response: a.n,
    }),
    ev(attacker, 'probe', 'b-1', PB_OLD, bProps),
    ev(attacker, 'probe2', 'b-1', PB, bProps),
    ev(attacker, '$feature_flag_called', 'b-1', PB, {
      $feature_flag: 'b-flag',
      $feature_flag_response: 'true',
    }),
  ])
  await insertPersons(ch, [
    { team: victim, id: PA, createdAt: TS, properties: { email: a.email, n: a.n }, version: 1 },
    { team: attacker, id: PB, createdAt: TS, properties: { email: 'b@b.com', n: '1' }, version: 1 },
  ])
  await insertDistinctIds(ch, [
    { team: victim, distinctId: a.distinctId, personId: PA, version: 1 },
    { team: attacker, distinctId: 'b-1', personId: PB, version: 1 },
  ])
  await insertOverrides(ch, [
    { team: victim, oldPersonId: PA_OLD, overridePersonId: PA, version: 1 },
    { team: attacker, oldPersonId: PB_OLD, overridePersonId: PB, version: 1 },
  ])
  await insertGroups(ch, [
    {
      team: victim,
      index: 0,
      key: a.group,
      createdAt: TS,
      properties: { n: a.n, name: a.email },
      version: 1,
    },
    {
      team: attacker,
      index: 0,
      key: 'b-group',
      createdAt: TS,
      properties: { n: '1', name: 'b' },
      version: 1,
    },
  ])
}

beforeAll(async () => {
  burrow = await startTestBurrow()
  for (const name of ['poisoned', 'benign'] as const) {
    const victim = await createTestProject(`victim ${name}`)
    const attacker = await createTestProject(`attacker ${name}`)
    // The attacker's key reaches only its own project.
    const call = api(burrow.url, await createTestKey(['query:read', 'person:read'], [attacker.id]))
    worlds[name] = { victim, attacker, call }
    await seed(victim.id, attacker.id, name === 'poisoned')
  }
})

// A failure (division by zero) exactly when the row is the poisoned victim's: each is the core of an
// attack that, evaluated on A's rows, would answer with an error instead of a result.
const FAILS_ON_A = {
  distinctId: "intDiv(1, if(startsWith(distinct_id, 'alice'), 0, 1)) = 1",
  event: "intDiv(1, if(startsWith(event, 'secret'), 0, 1)) = 1",
  property: "intDiv(1, if(startsWith(properties.n, 'hunt'), 0, 1)) = 1",
  person: "intDiv(1, if(startsWith(person.properties.email, 'alice'), 0, 1)) = 1",
}

// HogQL statements the attacker sends; B's own rows make each one answer.
const HOGQL_ATTACKS: Record<string, string> = {
  'the issue: toInt over arraySort over properties': `SELECT count() FROM events WHERE toInt(arrayElement(arraySort((x, y) -> y, [if(distinct_id IN ('b-1'), '1', properties)], [1]), 1)) = 1`,
  'toInt / toFloat / toDate / toUUID of properties': `SELECT count() FROM events WHERE toInt(properties.n) = 1 AND toFloat(properties.n) = 1 AND toDate(properties.d) = '2024-03-01' AND toUUID(properties.u) IS NOT NULL`,
  'toDate of the event name (a primary key column)': `SELECT count() FROM events WHERE toDate(event) IS NULL`,
  'status oracle on distinct_id': `SELECT count() FROM events WHERE ${FAILS_ON_A.distinctId}`,
  'status oracle on the event name': `SELECT count() FROM events WHERE ${FAILS_ON_A.event}`,
  'status oracle on a property, in the select list': `SELECT ${FAILS_ON_A.property} FROM events`,
  'status oracle through the person of an event': `SELECT count() FROM events WHERE ${FAILS_ON_A.person}`,
  'status oracle next to a timestamp range': `SELECT count() FROM events WHERE timestamp >= '2024-03-01' AND event IN ('probe', 'probe2', 'secret-x') AND ${FAILS_ON_A.distinctId}`,
  'error text of a pattern built from data': `SELECT count() FROM events WHERE match('abc', properties.pat)`,
  'ARRAY JOIN of a failing expression': `SELECT count() FROM events ARRAY JOIN [intDiv(1, if(startsWith(distinct_id, 'alice'), 0, 1))] AS x`,
  'ARRAY JOIN of properties converted': `SELECT sum(toInt(v)) FROM events ARRAY JOIN [properties.n, properties.d] AS v`,
  'lambda over distinct_id': `SELECT count() FROM events WHERE arrayExists(x -> intDiv(1, if(startsWith(x, 'alice'), 0, 1)) = 1, [distinct_id])`,
  'subquery in FROM': `SELECT count() FROM (SELECT distinct_id, event FROM events) WHERE ${FAILS_ON_A.distinctId}`,
  'subquery in IN': `SELECT count() FROM events WHERE distinct_id IN (SELECT distinct_id FROM events WHERE ${FAILS_ON_A.distinctId})`,
  'scalar subquery': `SELECT (SELECT count() FROM events WHERE ${FAILS_ON_A.property})`,
  CTE: `WITH x AS (SELECT distinct_id FROM events) SELECT count() FROM x WHERE ${FAILS_ON_A.distinctId}`,
  'join events to persons': `SELECT count() FROM events e JOIN persons p ON e.person_id = p.id WHERE intDiv(1, if(startsWith(p.properties.email, 'alice'), 0, 1)) = 1`,
  'left join, condition on the right table': `SELECT count() FROM events e LEFT JOIN persons p ON e.person_id = p.id WHERE intDiv(1, if(startsWith(p.properties.email, 'alice'), 0, 1)) = 1`,
  'left join, persons first': `SELECT count() FROM persons p LEFT JOIN person_distinct_ids d ON d.person_id = p.id WHERE ${FAILS_ON_A.distinctId.replace('distinct_id', 'd.distinct_id')}`,
  'right join, condition on the right table': `SELECT count() FROM events e RIGHT JOIN persons p ON e.person_id = p.id WHERE intDiv(1, if(startsWith(p.properties.email, 'alice'), 0, 1)) = 1`,
  'full join, condition on either side': `SELECT count() FROM persons p FULL OUTER JOIN person_distinct_ids d ON d.person_id = p.id WHERE ${FAILS_ON_A.distinctId.replace('distinct_id', 'd.distinct_id')} OR intDiv(1, if(startsWith(p.properties.email, 'alice'), 0, 1)) = 1`,
  union: `SELECT count() FROM (SELECT distinct_id AS d FROM events UNION ALL SELECT distinct_id AS d FROM person_distinct_ids) WHERE intDiv(1, if(startsWith(d, 'alice'), 0, 1)) = 1`,
  'persons table': `SELECT count() FROM persons WHERE intDiv(1, if(startsWith(properties.email, 'alice'), 0, 1)) = 1`,
  'person_distinct_ids table': `SELECT count() FROM person_distinct_ids WHERE ${FAILS_ON_A.distinctId}`,
  'groups table (key column)': `SELECT count() FROM groups WHERE intDiv(1, if(startsWith(key, 'alice'), 0, 1)) = 1 AND toInt(properties.n) = 1`,
  'feature_flag_usage table': `SELECT count() FROM feature_flag_usage WHERE intDiv(1, if(startsWith(flag, 'a-'), 0, 1)) = 1`,
  'person_id through overrides': `SELECT count() FROM events WHERE intDiv(1, if(person_id = toUUID('${PA}'), 0, 1)) = 1`,
  'aggregate of a failing expression': `SELECT sum(intDiv(1, if(startsWith(distinct_id, 'alice'), 0, 1))) FROM events`,
  'ORDER BY and LIMIT BY a failing expression': `SELECT event FROM events ORDER BY intDiv(1, if(startsWith(distinct_id, 'alice'), 0, 1)) LIMIT 1 BY intDiv(1, if(startsWith(event, 'secret'), 0, 1))`,
  'user PREWHERE': `SELECT count() FROM events PREWHERE ${FAILS_ON_A.distinctId}`,
  // B has no such event, so no row reaches toUInt8. A condition pushed into the guarded read would
  // reach its index analysis, which runs over every project's granules (18.16 failed there on this
  // conversion of a String key column), so a 200 shows the condition stayed out (the guard's barrier
  // held).
  'a condition pushed to the index analysis': `SELECT count() FROM events WHERE event = 'nothing' AND toUInt8(event) = 5`,
}

const hogqlFilter = (key: string) => [{ type: 'hogql', key }]
const trends = (key: string) => ({
  kind: 'TrendsQuery',
  series: [{ kind: 'EventsNode', event: 'probe' }],
  dateRange: { date_from: '2024-03-01', date_to: '2024-03-02' },
  interval: 'day',
  properties: hogqlFilter(key),
})

// Insight kinds that take `hogql` filters, through the query endpoint.
const INSIGHT_ATTACKS: Record<string, unknown> = {
  'TrendsQuery hogql filter': trends(FAILS_ON_A.distinctId),
  'TrendsQuery hogql filter on the person': trends(FAILS_ON_A.person),
  'EventsQuery where': {
    kind: 'EventsQuery',
    select: ['event', 'distinct_id'],
    where: [FAILS_ON_A.distinctId],
    after: '2024-01-01',
    before: '2024-04-01',
  },
  'EventsQuery hogql filter': {
    kind: 'EventsQuery',
    select: ['count()'],
    properties: hogqlFilter(FAILS_ON_A.property),
    after: '2024-01-01',
    before: '2024-04-01',
  },
  'FunnelsQuery hogql filter': {
    kind: 'FunnelsQuery',
    series: [
      { kind: 'EventsNode', event: 'probe' },
      { kind: 'EventsNode', event: 'probe2' },
    ],
    dateRange: { date_from: '2024-03-01', date_to: '2024-03-02' },
    properties: hogqlFilter(FAILS_ON_A.event),
  },
  'ActorsQuery over a trends point with a hogql filter': {
    kind: 'ActorsQuery',
    source: {
      kind: 'InsightActorsQuery',
      source: trends(FAILS_ON_A.distinctId),
      day: '2024-03-01',
      series: 0,
    },
  },
}

interface Answer {
  status: number
  body: unknown
}

/** What must not differ between the worlds: the status, the rows, the error's type, code and text. */
function essence(r: { status: number; body: Record<string, unknown> }): Answer {
  const b = r.body
  if (r.status >= 400) return { status: r.status, body: { type: b.type, code: b.code, detail: b.detail } }
  return { status: r.status, body: { results: b.results, columns: b.columns, hasMore: b.hasMore } }
}

async function ask(world: World, query: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  return world.call('POST', `/api/projects/${world.attacker.id}/query/`, { query, refresh: 'force_blocking' })
}

async function bothWorlds(query: unknown): Promise<[Answer, Answer]> {
  const poisoned = await ask(worlds.poisoned, query)
  const benign = await ask(worlds.benign, query)
  expect(JSON.stringify(poisoned.body)).not.toMatch(SECRETS)
  expect(poisoned.status, JSON.stringify(poisoned.body)).toBeLessThan(500)
  return [essence(poisoned), essence(benign)]
}

describe('another project rows never reach a user expression (query endpoint)', () => {
  // Each attack answers from B's rows: a 200 in the poisoned world means A's failing rows were never
  // evaluated (the control below shows the same expressions fail when they are).
  it.each(Object.entries(HOGQL_ATTACKS))('HogQL: %s', async (name, text) => {
    const [poisoned, benign] = await bothWorlds({ kind: 'HogQLQuery', query: text })
    expect(poisoned.status, JSON.stringify(poisoned.body)).toBe(200)
    expect(poisoned).toEqual(benign)
  })

  it.each(Object.entries(INSIGHT_ATTACKS))('%s', async (_name, query) => {
    const [poisoned, benign] = await bothWorlds(query)
    expect(poisoned.status, JSON.stringify(poisoned.body)).toBe(200)
    expect(poisoned).toEqual(benign)
  })

  it('answers the attacks with the attacker own rows', async () => {
    // The attacks are real queries, not refusals: B's rows answer them (2 probe events + 1 flag call).
    const [r] = await bothWorlds({ kind: 'HogQLQuery', query: HOGQL_ATTACKS['status oracle on distinct_id'] })
    expect(r).toEqual({ status: 200, body: { results: [[3]], columns: ['count()'], hasMore: false } })
    const [usage] = await bothWorlds({
      kind: 'HogQLQuery',
      query: 'SELECT flag, sum(calls) FROM feature_flag_usage GROUP BY flag ORDER BY flag',
    })
    expect(usage.body).toMatchObject({ results: [['b-flag', 3]] })
  })

  it('answers an own-data failure with a generic message that quotes no value', async () => {
    const [r] = await bothWorlds({ kind: 'HogQLQuery', query: 'SELECT intDiv(1, 0) + count() FROM events' })
    expect(r).toMatchObject({ status: 400, body: { type: 'validation_error', code: 'query_value_error' } })
  })
})

// ---- the compiled SQL alone, with the server's push-down and PREWHERE optimizations forced on -----

/** Settings a server profile could set that move conditions ahead of or beside a guard. */
const HOSTILE: Record<string, string> = {
  enable_optimize_predicate_expression: '1',
  optimize_move_to_prewhere: '1',
  optimize_prewhere_after_pushdown: '1',
  enable_multiple_prewhere_read_steps: '0',
  move_all_conditions_to_prewhere: '1',
  allow_reorder_prewhere_conditions: '1',
  short_circuit_function_evaluation: 'disable',
  query_plan_filter_push_down: '1',
}

async function hostileSettings(client: ClickHouseClient): Promise<Record<string, string>> {
  const names = Object.keys(HOSTILE)
    .map((n) => `'${n}'`)
    .join(', ')
  const rs = await client.query({
    query: `SELECT name FROM system.settings WHERE name IN (${names})`,
    format: 'JSONEachRow',
  })
  const known = new Set((await rs.json<{ name: string }>()).map((r) => r.name))
  return Object.fromEntries(Object.entries(HOSTILE).filter(([n]) => known.has(n)))
}

async function outcome(sql: string, settings: Record<string, string>): Promise<string> {
  try {
    const rs = await ch.query({ query: sql, format: 'JSONCompact', clickhouse_settings: settings })
    // as text: servers differ in quoting 64-bit integers
    return JSON.stringify(((await rs.json()) as { data: unknown[][] }).data.map((row) => row.map(String)))
  } catch (err) {
    return `error ${/^Code: (\d+)/.exec((err as Error).message)?.[1] ?? (err as { code?: string }).code}: ${(err as Error).message}`
  }
}

const HOSTILE_CASES = Object.entries(HOGQL_ATTACKS)

describe('the structural guard holds without Burrow settings, under hostile server settings', () => {
  let hostile: Record<string, string> = {}
  beforeAll(async () => {
    hostile = await hostileSettings(ch)
  })

  it.each(HOSTILE_CASES)('%s', async (name, text) => {
    const results = []
    for (const w of [worlds.poisoned, worlds.benign]) {
      const { clickhouse: sql } = await compileHogQL(text, { teamId: w.attacker.id })
      results.push(await outcome(sql, hostile))
    }
    expect(results[0]).not.toMatch(SECRETS)
    expect(results[0]).not.toMatch(/^error/)
    expect(results[0]).toEqual(results[1])
  })

  it('compiles with the LIMIT barrier', async () => {
    const { clickhouse: sql } = await compileHogQL('SELECT count() FROM events', { teamId: 1 })
    expect(sql).toContain('LIMIT 18446744073709551615)')
  })

  it('control: a guard in the same WHERE as the expression leaks, so A rows are where the attacks look', async () => {
    const team = worlds.poisoned.attacker.id
    const unguarded = (cond: string) => `SELECT count() FROM events WHERE team_id = ${team} AND ${cond}`
    const cond = "intDiv(1, if(startsWith(distinct_id, 'alice'), 0, 1)) = 1"
    // the status oracle: B's three events all pass, yet the query fails on A's row
    expect(await outcome(unguarded(cond), {})).toMatch(/^error 153/)
    const { clickhouse: guarded } = await compileHogQL(`SELECT count() FROM events WHERE ${cond}`, {
      teamId: team,
    })
    expect(await outcome(guarded, {})).toBe('[["3"]]')
    // the message oracle: A's value in the error text
    const parse = "toInt64(ifNull(JSONExtract(properties, 'n', 'Nullable(String)'), '1')) = 1"
    expect(await outcome(unguarded(parse), {})).toMatch(/Cannot parse string 'hunter2'/)
  })
})

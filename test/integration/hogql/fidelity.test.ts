// HogQL answers as PostHog answers them: PostHog's own test cases (null-safe comparisons, concat,
// joins...) compiled for the server under test and run on it. Expected values come from PostHog's
// tests (posthog/hogql/test/test_query.py) or, for rows inserted here, from counting by hand.
import { beforeAll, describe, expect, it } from 'vitest'
import { capabilitiesOf, compileHogQL } from '../../../src/hogql/index.ts'
import { clickhouse, stack, uniqueTeamId } from '../../harness/index.ts'
import { insertEvents } from './fixtures.ts'
import { BETWEEN, NULL_EQUALITY, nullEqualityForms } from './null-equality.cases.ts'

const ch = clickhouse()
const TEAM = uniqueTeamId()
const uuid = (n: number) => `00000000-0000-7000-8000-${n.toString().padStart(12, '0')}`
const P1 = '00000000-0000-4000-8000-000000000001'

async function run(hogql: string): Promise<unknown[][]> {
  const compiled = await compileHogQL(hogql, {
    teamId: TEAM,
    capabilities: capabilitiesOf(stack().clickhouse.version),
  })
  const result = await ch.query({ query: compiled.clickhouse, format: 'JSONCompact' })
  const json = (await result.json()) as { data: unknown[][] }
  return json.data.map((row) =>
    row.map((v, i) => (/^U?Int64$/.test(compiled.types[i] ?? '') && typeof v === 'string' ? Number(v) : v)),
  )
}

beforeAll(async () => {
  await insertEvents(ch, [
    {
      team: TEAM,
      uuid: uuid(1),
      event: 'a',
      distinctId: 'd1',
      personId: P1,
      timestamp: '2024-01-01 00:00:01',
      properties: { plan: 'pro', n: 5 },
    },
    {
      team: TEAM,
      uuid: uuid(2),
      event: 'b',
      distinctId: 'd1',
      personId: P1,
      timestamp: '2024-01-01 00:00:02',
      properties: { plan: 'free', n: 1 },
    },
    {
      team: TEAM,
      uuid: uuid(3),
      event: 'c',
      distinctId: 'd2',
      personId: P1,
      timestamp: '2024-01-01 00:00:03',
      properties: {},
    },
  ])
})

describe('comparisons are null-safe (PostHog test_null_equality)', () => {
  const cases = NULL_EQUALITY.flatMap(([a, op, b, res]) =>
    nullEqualityForms(a, op, b).map((q) => [q, res] as const),
  )
  it.each(cases)('%s = %i', async (q, res) => {
    expect(await run(q)).toEqual([[res]])
  })
})

describe('BETWEEN with NULL is 0 (PostHog test_between_operators)', () => {
  it.each(BETWEEN)('select %s = %i', async (e, res) => {
    expect(await run(`select ${e}`)).toEqual([[res]])
  })
})

describe('missing properties compare as NULL, never as an unknown', () => {
  it.each([
    ["select count() from events where not (properties.plan = 'pro')", 2],
    ["select count() from events where properties.plan != 'pro'", 2],
    ["select count() from events where properties.plan not in ('pro')", 2],
    ["select count() from events where properties.plan not like '%ro'", 2],
    ["select count() from events where properties.plan !~ 'ro$'", 2],
    ['select count() from events where not (properties.n > 3)', 2],
    ['select count() from events where properties.n not between 2 and 10', 2],
    ['select count() from events where properties.plan in (null)', 1],
    ["select count() from events where properties.plan in ('free', null)", 2],
    ["select count() from events where properties.plan not in ('free', null)", 1],
  ])('%s', async (q, n) => {
    expect(await run(q)).toEqual([[n]])
  })

  it('select them as 0/1', async () => {
    expect(
      await run(
        "select properties.plan = 'pro', properties.plan != 'pro', properties.n < 3, properties.plan in ('pro') from events order by timestamp",
      ),
    ).toEqual([
      [1, 0, 0, 1],
      [0, 1, 1, 0],
      [0, 1, 0, 0],
    ])
  })
})

describe('concat and || read NULL as an empty string and convert other values (PostHog test_concat)', () => {
  it.each([
    ["select concat(null, 'a', 3, toString(4), toString(NULL))", 'a34'],
    ["select 'a' || null || 1", 'a1'],
    ["select concat('only')", 'only'],
    ['select concat(toString(null), null)', ''],
  ])('%s', async (q, out) => {
    expect(await run(q)).toEqual([[out]])
  })

  it('reads missing properties and non-text columns', async () => {
    expect(
      await run(
        "select concat(event, '-', properties.plan, '-', properties.n) from events order by timestamp",
      ),
    ).toEqual([['a-pro-5'], ['b-free-1'], ['c--']])
  })
})

// HogQL answers as PostHog answers them: PostHog's own test cases (null-safe comparisons, concat,
// joins...) compiled for the server under test and run on it. Expected values come from PostHog's
// tests (posthog/hogql/test/test_query.py) or, for rows inserted here, from counting by hand.
import { beforeAll, describe, expect, it } from 'vitest'
import { compileHogQL, HogQLError } from '../../../src/hogql/index.ts'
import { clickhouse, uniqueTeamId } from '../../harness/index.ts'
import { insertEvents, insertOverrides, insertPersons } from './fixtures.ts'
import {
  CASE_INSENSITIVE_AGGREGATES,
  CASE_INSENSITIVE_NEWER,
  CASE_INSENSITIVE_SAMPLES,
  EVERYWHERE_AGGREGATES,
  EVERYWHERE_SAMPLES,
  NEWER_AGGREGATES,
  NEWER_CONVERSIONS,
  NEWER_SAMPLES,
  NEWER_TIME,
} from './function-samples.ts'
import { BETWEEN, NULL_EQUALITY, nullEqualityForms } from './null-equality.cases.ts'

const ch = clickhouse()
const TEAM = uniqueTeamId()
const JOINS = TEAM + 1
const uuid = (n: number) => `00000000-0000-7000-8000-${n.toString().padStart(12, '0')}`
const P1 = '00000000-0000-4000-8000-000000000001'
const P2 = '00000000-0000-4000-8000-000000000002' // merged into P1
const P3 = '00000000-0000-4000-8000-000000000003'

async function run(hogql: string, teamId = TEAM): Promise<unknown[][]> {
  const compiled = await compileHogQL(hogql, {
    teamId,
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

beforeAll(async () => {
  const ev = (n: number, event: string, personId: string) => ({
    team: JOINS,
    uuid: uuid(100 + n),
    event,
    distinctId: `d${n}`,
    personId,
    timestamp: `2024-01-02 00:00:0${n}`,
  })
  await insertEvents(ch, [ev(1, 'a', P1), ev(2, 'b', P2), ev(3, 'c', P3)])
  await insertOverrides(ch, [{ team: JOINS, oldPersonId: P2, overridePersonId: P1, version: 1 }])
  await insertPersons(ch, [
    { team: JOINS, id: P1, createdAt: '2024-01-01 00:00:00', properties: { email: 'p1@x' }, version: 1 },
    { team: JOINS, id: P3, createdAt: '2024-01-01 00:00:00', properties: { email: 'p3@x' }, version: 1 },
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

// PostHog runs every query with `transform_null_in = 1` (posthog/clickhouse/client/execute.py): in
// IN, NULL is a value like any other, for lists, subqueries and tuples alike. The answers below are
// that setting's rules as ClickHouse documents and tests them (tests/queries/0_stateless/
// 01231_operator_null_in.sql: `i NOT IN (1, 3, NULL)` keeps no NULL row, `i NOT IN (1, 3)` keeps them).
describe('IN treats NULL as a value (PostHog runs with transform_null_in = 1)', () => {
  it.each([
    ['NULL IN (SELECT NULL)', 1],
    ['NULL NOT IN (SELECT NULL)', 0],
    ['NULL IN (SELECT 1)', 0],
    ['NULL NOT IN (SELECT 1)', 1],
    ['NULL IN (1, NULL)', 1],
    ['NULL IN (1, 2)', 0],
    ['NULL NOT IN (1, 2)', 1],
    ['1 IN (NULL)', 0],
    ['1 NOT IN (NULL)', 1],
    ['2 NOT IN (1, NULL)', 1],
    ['(1, NULL) IN ((1, NULL), (2, 3))', 1],
    ['(1, NULL) IN ((1, 2), (2, 3))', 0],
    ['(1, NULL) NOT IN ((1, NULL))', 0],
    ['(NULL, NULL) IN ((NULL, NULL))', 1],
    ['(1, NULL) IN (SELECT 1, NULL)', 1],
    ['(NULL, 1) IN (SELECT NULL, 2)', 0],
    ['toNullable(NULL) IN (SELECT toNullable(1) UNION ALL SELECT NULL)', 1],
    ["if(1 = 1, NULL, 'a') IN (SELECT 'b' UNION ALL SELECT NULL)", 1],
    ["if(1 = 1, NULL, 'a') NOT IN (SELECT 'b' UNION ALL SELECT NULL)", 0],
    ["if(1 = 1, NULL, 'a') IN (SELECT 'b')", 0],
    ["if(1 = 1, NULL, 'a') NOT IN (SELECT 'b')", 1],
  ])('select %s = %i', async (e, res) => {
    expect(await run(`select ${e}`)).toEqual([[res]])
  })

  it('matches missing properties against a subquery holding NULL', async () => {
    // events: plan 'pro', 'free', missing; the subquery's rows are 'free' and NULL
    const sub = "(select properties.plan from events where event != 'a')"
    expect(await run(`select count() from events where properties.plan in ${sub}`)).toEqual([[2]])
    expect(await run(`select count() from events where properties.plan not in ${sub}`)).toEqual([[1]])
    expect(
      await run(`select event from events where properties.plan not in (select 'free') order by event`),
    ).toEqual([['a'], ['c']])
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

describe('a joined table whose join key needs its own lazy join (person_id through overrides)', () => {
  it('joins events to events on person_id', async () => {
    expect(
      await run(
        'SELECT e1.event, e2.event FROM events e1 JOIN events e2 ON e1.person_id = e2.person_id ORDER BY e1.event, e2.event',
        JOINS,
      ),
    ).toEqual([
      ['a', 'a'],
      ['a', 'b'],
      ['b', 'a'],
      ['b', 'b'],
      ['c', 'c'],
    ])
  })

  it('joins persons to events on the merged person', async () => {
    expect(
      await run(
        'SELECT persons.id, events.event, persons.properties.email FROM persons JOIN events ON persons.id = events.person_id ORDER BY events.event',
        JOINS,
      ),
    ).toEqual([
      [P1, 'a', 'p1@x'],
      [P1, 'b', 'p1@x'],
      [P3, 'c', 'p3@x'],
    ])
  })

  it("reads the joined table's lazy fields in the select list and WHERE", async () => {
    expect(
      await run(
        "SELECT p.id, e.person.properties.email FROM persons p LEFT JOIN events e ON p.id = e.person_id WHERE e.event != 'a' ORDER BY e.event",
        JOINS,
      ),
    ).toEqual([
      [P1, 'p1@x'],
      [P3, 'p3@x'],
    ])
  })
})

// 64-bit integers come back quoted from one server and not the other: compare numbers as text.
const asText = (v: unknown): unknown =>
  Array.isArray(v) ? v.map(asText) : typeof v === 'number' ? String(v) : v

describe("functions from PostHog's list", () => {
  it.each(EVERYWHERE_SAMPLES)('select %s', async (e, want) => {
    expect(asText((await run(`select ${e}`))[0]![0])).toEqual(asText(want))
  })

  it.each(EVERYWHERE_AGGREGATES)('select %s from numbers(5)', async (e, want) => {
    const rows = await run(`select ${e} from (select number as x from numbers(5))`)
    expect(asText(rows[0]![0])).toEqual(asText(want))
  })

  const newer = async (q: string, want: unknown) => {
    expect(asText((await run(q))[0]![0])).toEqual(asText(want))
  }

  it.each([...NEWER_SAMPLES, ...NEWER_CONVERSIONS, ...NEWER_TIME])(
    "select %s (PostHog's wider list)",
    (e, want) => newer(`select ${e}`, want),
  )

  it.each(NEWER_AGGREGATES)("select %s from numbers(5) (PostHog's wider list)", (e, want) =>
    newer(`select ${e} from (select number as x from numbers(5))`, want),
  )

  // PostHog's case_sensitive=False names, spelled as SQL users type them.
  it.each(CASE_INSENSITIVE_SAMPLES)('select %s (a name PostHog reads in any case)', async (e, want) => {
    expect(asText((await run(`select ${e}`))[0]![0])).toEqual(asText(want))
  })

  it.each(CASE_INSENSITIVE_NEWER)('select %s (in any case)', (e, want) => newer(`select ${e}`, want))

  it.each(CASE_INSENSITIVE_AGGREGATES)('select %s from numbers(5) (in any case)', async (e, want) => {
    const rows = await run(`select ${e} from (select number as x from numbers(5))`)
    expect(asText(rows[0]![0])).toEqual(asText(want))
  })

  it('refuses a scale of toDecimal that is no whole number', async () => {
    const q = "select toDecimal('1.2', 'a')"
    await expect(run(q)).rejects.toThrow(/the scale must be a number from 0 to 18/)
  })

  it('refuses arrayReduce with a name that is no allowed aggregate', async () => {
    await expect(run("select arrayReduce('file', [1])")).rejects.toThrow(/must name an allowed aggregate/)
  })
})

describe('numbers()', () => {
  it('reads numbers(n) and numbers(offset, n)', async () => {
    expect(asText(await run('select number from numbers(2, 3)'))).toEqual([['2'], ['3'], ['4']])
    expect(asText(await run('select sum(number) from numbers(10)'))).toEqual([['45']])
  })

  it('refuses other table functions and huge ranges', async () => {
    await expect(run("select * from url('http://x', CSV)")).rejects.toThrow(/Table functions are not allowed/)
    await expect(run('select * from numbers(100000000000)')).rejects.toThrow(/at most/)
  })
})

describe('smaller differences from PostHog', () => {
  it('trims given characters: trim(LEADING/TRAILING/BOTH x FROM s)', async () => {
    expect(
      await run(
        "select trim(LEADING 'x' FROM 'xxaxx'), trim(TRAILING 'x' FROM 'xxaxx'), trim(BOTH 'x' FROM 'xxaxx'), trim(BOTH ']^-' FROM '^]a-')",
      ),
    ).toEqual([['axx', 'xxa', 'a', 'a']])
  })

  it("reads now('zone')", async () => {
    expect(await run("select toTimeZone(now('Asia/Tokyo'), 'UTC') <= now() + 1")).toEqual([[1]])
  })

  it('reads {filters} without filters as true', async () => {
    expect(await run('select count() from events where {filters}')).toEqual([[3]])
  })

  it('applies the default limit to each branch of a UNION ALL, as PostHog (test_hogql_union_all_limits)', async () => {
    const rows = await run('select number from numbers(80) union all select number from numbers(80)')
    expect(rows).toHaveLength(160)
    const capped = await run('select number from numbers(150) union all select number from numbers(30)')
    expect(capped).toHaveLength(130)
    // a LIMIT written on a branch is that branch's
    expect(await run('select number from numbers(150) limit 120 union all select 1')).toHaveLength(121)
  })

  it.each([
    [
      'select * from events e join persons p on e.person_id = p.id',
      /SELECT \* is not supported with more than one table/,
    ],
    ['select * from (select 1 as a, 2 as a)', /used twice/],
    ['select event from events having 1', /HAVING without GROUP BY/],
    ['select event from events limit event', /LIMIT must be a constant/],
  ])('refuses with a 400 naming the construct: %s', async (q, message) => {
    const err = await run(q).catch((x: unknown) => x)
    expect(err).toBeInstanceOf(HogQLError)
    expect((err as HogQLError).message).toMatch(message)
  })
})

describe('INTERSECT and EXCEPT', () => {
  it.each([
    ['select number from numbers(5) intersect select number from numbers(3, 5)', [['3'], ['4']]],
    ['select number from numbers(4) except select number from numbers(2, 5)', [['0'], ['1']]],
  ])('%s', async (q, want) => {
    const rows = asText(await run(q)) as string[][]
    expect(rows.sort()).toEqual(want)
  })
})

describe('ARRAY JOIN over a select alias', () => {
  it('unrolls the aliased item', async () => {
    expect(asText(await run('select [1, 2] as a, x from numbers(1) array join a as x'))).toEqual([
      [['1', '2'], '1'],
      [['1', '2'], '2'],
    ])
    expect(await run("select event as t, x from events array join [t, 'z'] as x where event = 'a'")).toEqual([
      ['a', 'a'],
      ['a', 'z'],
    ])
  })
})

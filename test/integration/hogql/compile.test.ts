// Runs printed HogQL against the real ClickHouse and checks the results
// against rows inserted here by hand. Two teams hold look-alike data to prove isolation.
import { beforeAll, describe, expect, it } from 'vitest'
import { type CompileOptions, compileHogQL, HogQLError } from '../../../src/hogql/index.ts'
import { clickhouse, uniqueTeamId } from '../../harness/index.ts'
import { insertDistinctIds, insertEvents, insertGroups, insertOverrides, insertPersons } from './fixtures.ts'

const ch = clickhouse()
const A = uniqueTeamId()
const B = uniqueTeamId() + 1

const P1 = '00000000-0000-4000-8000-000000000001'
const P2 = '00000000-0000-4000-8000-000000000002'
const P3 = '00000000-0000-4000-8000-000000000003' // merged into P1
const P4 = '00000000-0000-4000-8000-000000000004' // deleted
const PB = '00000000-0000-4000-8000-0000000000b1'
const uuid = (n: number) => `00000000-0000-7000-8000-${n.toString().padStart(12, '0')}`

async function run(hogql: string, opts: Partial<CompileOptions> = {}): Promise<unknown[][]> {
  const compiled = await compileHogQL(hogql, { teamId: A, ...opts })
  const result = await ch.query({ query: compiled.clickhouse, format: 'JSONCompact' })
  const json = (await result.json()) as { data: unknown[][] }
  // 64-bit integers come back quoted; turn them into numbers for readable expectations.
  return json.data.map((row) =>
    row.map((v, i) => (/^U?Int64$/.test(compiled.types[i] ?? '') && typeof v === 'string' ? Number(v) : v)),
  )
}

beforeAll(async () => {
  await insertPersons(ch, [
    { team: A, id: P1, createdAt: '2024-01-01 00:00:00.250', properties: { email: 'old@x.com' }, version: 1 },
    {
      team: A,
      id: P1,
      createdAt: '2024-01-01 00:00:00.250',
      properties: { email: 'alice@x.com', plan: 'pro' },
      version: 2,
      identified: true,
    },
    { team: A, id: P2, createdAt: '2024-01-02 12:00:00.000', properties: { email: 'bob@y.com' }, version: 1 },
    {
      team: A,
      id: P3,
      createdAt: '2024-01-03 00:00:00.000',
      properties: { email: 'carol@z.com' },
      version: 1,
    },
    { team: A, id: P3, createdAt: '2024-01-03 00:00:00.000', properties: {}, version: 2, deleted: true },
    {
      team: A,
      id: P4,
      createdAt: '2024-01-04 00:00:00.000',
      properties: { email: 'gone@x.com' },
      version: 1,
    },
    { team: A, id: P4, createdAt: '2024-01-04 00:00:00.000', properties: {}, version: 2, deleted: true },
    {
      team: B,
      id: PB,
      createdAt: '2024-01-01 00:00:00.000',
      properties: { email: 'eve@evil.com' },
      version: 1,
    },
    // Same id as a team A person: must never mix.
    {
      team: B,
      id: P1,
      createdAt: '2024-01-01 00:00:00.000',
      properties: { email: 'mallory@evil.com' },
      version: 9,
    },
  ])
  await insertDistinctIds(ch, [
    { team: A, distinctId: 'd1', personId: P1, version: 1 },
    { team: A, distinctId: 'd2', personId: P2, version: 1 },
    { team: A, distinctId: 'd3', personId: P3, version: 1 },
    { team: A, distinctId: 'd3', personId: P1, version: 2 },
    { team: B, distinctId: 'evil', personId: PB, version: 1 },
  ])
  await insertOverrides(ch, [
    { team: A, oldPersonId: P3, overridePersonId: P1, version: 1 },
    // Team B's override of P2 must not touch team A's events.
    { team: B, oldPersonId: P2, overridePersonId: PB, version: 1 },
  ])
  await insertGroups(ch, [
    {
      team: A,
      index: 0,
      key: 'acme',
      createdAt: '2024-01-01 00:00:00',
      properties: { name: 'Acme' },
      version: 1,
    },
    {
      team: A,
      index: 0,
      key: 'acme',
      createdAt: '2024-01-01 00:00:00',
      properties: { name: 'Acme Inc' },
      version: 2,
    },
    {
      team: B,
      index: 0,
      key: 'acme',
      createdAt: '2024-01-01 00:00:00',
      properties: { name: 'Evil Corp' },
      version: 5,
    },
  ])
  await insertEvents(ch, [
    {
      team: A,
      uuid: uuid(1),
      event: '$pageview',
      distinctId: 'd1',
      personId: P1,
      timestamp: '2024-03-01 10:00:00.123',
      properties: {
        $browser: 'Chrome',
        price: 10,
        ok: true,
        nested: { a: { b: 'deep' } },
        n: null,
        tag: 'x',
      },
      sessionId: 's1',
    },
    {
      team: A,
      uuid: uuid(2),
      event: '$pageview',
      distinctId: 'd2',
      personId: P2,
      timestamp: '2024-03-01 11:30:00.456',
      properties: { $browser: 'Firefox', price: 2.5, ok: false },
    },
    {
      team: A,
      uuid: uuid(3),
      event: 'signup',
      distinctId: 'd3',
      personId: P3,
      timestamp: '2024-03-02 09:00:00.789',
      properties: { $browser: 'chrome mobile', price: '100' },
    },
    {
      team: A,
      uuid: uuid(4),
      event: '$pageview',
      distinctId: 'd1',
      personId: P1,
      timestamp: '2024-03-09 23:59:59.999',
      properties: { $browser: 'Safari' },
    },
    {
      team: A,
      uuid: uuid(5),
      event: 'purchase',
      distinctId: 'd2',
      personId: P2,
      timestamp: '2024-02-28 00:00:00.000',
      properties: { price: 99, $browser: 'Chrome' },
      groups: ['acme'],
    },
    {
      team: B,
      uuid: uuid(6),
      event: '$pageview',
      distinctId: 'evil',
      personId: P2,
      timestamp: '2024-03-01 10:00:00.000',
      properties: { $browser: 'Chrome', secret: 'team-b', price: 10 },
      groups: ['acme'],
    },
  ])
})

describe('selects and filters', () => {
  it('counts events per name', async () => {
    expect(await run('select event, count() as c from events group by event order by event')).toEqual([
      ['$pageview', 3],
      ['purchase', 1],
      ['signup', 1],
    ])
  })

  it('reads string properties exactly', async () => {
    expect(await run("select uuid from events where properties.$browser = 'Chrome' order by uuid")).toEqual([
      [uuid(1)],
      [uuid(5)],
    ])
  })

  it('compares properties with numbers numerically', async () => {
    // 10, '100' and 99 are above 5; 2.5 is not (as text '2.5' > '5' would be false anyway, '10' < '5' as text)
    expect(await run('select uuid from events where properties.price > 5 order by uuid')).toEqual([
      [uuid(1)],
      [uuid(3)],
      [uuid(5)],
    ])
    expect(await run('select uuid from events where properties.price in (10, 99) order by uuid')).toEqual([
      [uuid(1)],
      [uuid(5)],
    ])
  })

  it('compares properties with booleans as stored text', async () => {
    expect(await run('select uuid from events where properties.ok = true')).toEqual([[uuid(1)]])
    expect(await run('select uuid from events where properties.ok = false')).toEqual([[uuid(2)]])
  })

  it('reads a missing key as NULL, not an empty string', async () => {
    expect(await run("select properties.tag, properties.n from events where event = 'purchase'")).toEqual([
      [null, null],
    ])
    expect(await run('select count() from events where properties.tag is null')).toEqual([[4]])
    expect(await run("select count() from events where properties.tag = ''")).toEqual([[0]])
  })

  it("answers ifNull(…, '') and nullIf(…, '') of a property as for a NULL missing key", async () => {
    const hogql =
      "select uuid, ifNull(properties.tag, ''), nullIf(properties.tag, ''), nullIf(toString(properties.tag), '')," +
      " ifNull(nullIf(toString(properties.tag), ''), 'none'), ifNull(properties.tag, '') != 'x'" +
      " from events where event = '$pageview' order by uuid"
    expect(await run(hogql)).toEqual([
      [uuid(1), 'x', 'x', 'x', 'x', 0],
      [uuid(2), '', null, null, 'none', 1],
      [uuid(4), '', null, null, 'none', 1],
    ])
  })

  it('reads nested object paths', async () => {
    expect(
      await run("select properties.nested.a.b from events where properties.nested.a.b = 'deep'"),
    ).toEqual([['deep']])
    expect(
      await run("select properties['nested']['a']['b'] from events where uuid = {u}", {
        values: { u: uuid(1) },
      }),
    ).toEqual([['deep']])
    expect(
      await run('select properties.nested.a from events where uuid = {u}', { values: { u: uuid(1) } }),
    ).toEqual([['{"b":"deep"}']])
  })

  it('prints ilike portably', async () => {
    expect(
      await run("select uuid from events where properties.$browser ilike '%CHROME%' order by uuid"),
    ).toEqual([[uuid(1)], [uuid(3)], [uuid(5)]])
    expect(await run("select count() from events where event not ilike '$PAGE%'")).toEqual([[2]])
  })

  it('orders, limits and offsets', async () => {
    expect(await run('select uuid from events order by timestamp desc limit 2')).toEqual([
      [uuid(4)],
      [uuid(3)],
    ])
    expect(await run('select uuid from events order by timestamp limit 2 offset 1')).toEqual([
      [uuid(1)],
      [uuid(2)],
    ])
    expect(await run('select uuid from events', { defaultLimit: 3 })).toHaveLength(3)
    expect(await run('select uuid from events limit 1000', { maxLimit: 4 })).toHaveLength(4)
    expect(await run('select event from events order by timestamp limit 1 by event')).toHaveLength(3)
  })

  it('substitutes placeholders as escaped literals', async () => {
    expect(await run('select count() from events where event = {e}', { values: { e: 'signup' } })).toEqual([
      [1],
    ])
    expect(
      await run('select count() from events where event = {e}', { values: { e: "x' or 1=1 --" } }),
    ).toEqual([[0]])
    expect(
      await run('select count() from events where event in {e}', { values: { e: ['signup', 'purchase'] } }),
    ).toEqual([[2]])
  })

  it('has HAVING, DISTINCT, aggregates and combinators', async () => {
    expect(
      await run(
        'select distinct_id, count() as c, sum(toFloat(properties.price)) as s from events group by distinct_id having c > 1 order by distinct_id',
      ),
    ).toEqual([
      ['d1', 2, 10],
      ['d2', 2, 101.5],
    ])
    expect(
      await run("select uniq(person_id), countIf(event = '$pageview'), max(properties.$browser) from events"),
    ).toEqual([[2, 3, 'chrome mobile']])
    expect(
      await run('select quantile(0.5)(toFloat(properties.price)) from events where properties.price > 50'),
    ).toEqual([[99.5]])
    expect(await run('select count(distinct event), argMax(event, timestamp) from events')).toEqual([
      [3, '$pageview'],
    ])
    expect(
      await run('select groupArray(event) from (select event from events order by timestamp limit 2)'),
    ).toEqual([[['purchase', '$pageview']]])
  })
})

describe('timestamps and dates', () => {
  it('returns selected timestamps as DateTime64(6), as PostHog stores them', async () => {
    expect(await run("select timestamp from events where event = 'signup'")).toEqual([
      ['2024-03-02 09:00:00.789000'],
    ])
    expect(await run("select * from (select timestamp as t from events where event = 'signup')")).toEqual([
      ['2024-03-02 09:00:00.789000'],
    ])
    expect(await run("select toString(timestamp) from events where event = 'signup'")).toEqual([
      ['2024-03-02 09:00:00.789000'],
    ])
    const compiled = await compileHogQL('select timestamp from events', { teamId: A })
    expect(compiled.types).toEqual(["DateTime64(6, 'UTC')"])
  })

  it('compares timestamps with strings and now()', async () => {
    expect(
      await run("select count() from events where timestamp >= '2024-03-01' and timestamp < '2024-03-02'"),
    ).toEqual([[2]])
    expect(await run('select count() from events where timestamp < now() - interval 1 day')).toEqual([[5]])
    // the fraction counts: an event at 23:59:59.999 is after 23:59:59
    expect(await run("select count() from events where timestamp > '2024-03-09 23:59:59'")).toEqual([[1]])
    expect(await run("select count() from events where timestamp > '2024-03-09 23:59:59.999'")).toEqual([[0]])
  })

  it('truncates dates', async () => {
    // 2024-03-09 is a Saturday: weeks start on Sunday 03-03 (mode 0) or Monday 03-04 (mode 1)
    expect(
      await run(
        "select toStartOfDay(timestamp), toStartOfHour(timestamp), toStartOfWeek(timestamp), toStartOfWeek(timestamp, 1), toStartOfMonth(timestamp), toDate(timestamp) from events where event = '$pageview' and properties.$browser = 'Safari'",
      ),
    ).toEqual([
      ['2024-03-09 00:00:00', '2024-03-09 23:00:00', '2024-03-03', '2024-03-04', '2024-03-01', '2024-03-09'],
    ])
    expect(
      await run(
        "select dateDiff('day', toDate('2024-03-01'), toDate(timestamp)), dateAdd('day', 2, toDate(timestamp)), date_sub(toDate(timestamp), interval 1 month) from events where event = 'signup'",
      ),
    ).toEqual([[1, '2024-03-04', '2024-02-02']])
  })

  it('works in the project time zone', async () => {
    // 2024-02-28 00:00 UTC is 2024-02-27 19:00 in New York
    const opts = { timezone: 'America/New_York' }
    expect(
      await run("select toDate(timestamp), timestamp from events where event = 'purchase'", opts),
    ).toEqual([['2024-02-27', '2024-02-27 19:00:00.000000']])
    // the string is read in the project zone too: 2024-02-27 19:00 New York is the purchase
    expect(await run("select count() from events where timestamp = '2024-02-27 19:00:00'", opts)).toEqual([
      [1],
    ])
    expect(
      await run("select count() from events where toStartOfDay(timestamp) = '2024-02-27'", opts),
    ).toEqual([[1]])
  })
})

describe('persons and merges', () => {
  it('reports the merged person for events stamped with an old person id', async () => {
    expect(await run("select person_id, person.id from events where event = 'signup'")).toEqual([[P1, P1]])
    expect(await run('select count(distinct person_id) from events')).toEqual([[2]])
  })

  it('reads the latest person properties', async () => {
    expect(
      await run(
        'select event, person.properties.email, person.properties.plan from events order by timestamp',
      ),
    ).toEqual([
      ['purchase', 'bob@y.com', null],
      ['$pageview', 'alice@x.com', 'pro'],
      ['$pageview', 'bob@y.com', null],
      ['signup', 'alice@x.com', 'pro'],
      ['$pageview', 'alice@x.com', 'pro'],
    ])
    expect(await run("select count() from events where person.properties.email ilike '%@x.com'")).toEqual([
      [3],
    ])
  })

  it('lists live persons only', async () => {
    expect(
      await run('select id, properties.email, created_at, is_identified from persons order by created_at'),
    ).toEqual([
      [P1, 'alice@x.com', '2024-01-01 00:00:00.250', 1],
      [P2, 'bob@y.com', '2024-01-02 12:00:00.000', 0],
    ])
    expect(await run('select distinct_id, person_id from person_distinct_ids order by distinct_id')).toEqual([
      ['d1', P1],
      ['d2', P2],
      ['d3', P1],
    ])
  })

  it('filters by person through IN subqueries', async () => {
    expect(
      await run(
        "select count() from events where person_id in (select id from persons where properties.plan = 'pro')",
      ),
    ).toEqual([[3]])
  })
})

describe('subqueries, joins, CTEs, unions', () => {
  it('selects from subqueries', async () => {
    // the events span two partitions, and person_id needs a join: DISTINCT must still deduplicate
    expect(await run('select distinct person_id from events order by person_id')).toEqual([[P1], [P2]])
    expect(await run('select count() from (select distinct person_id from events)')).toEqual([[2]])
    expect(
      await run('select e, c from (select event as e, count() as c from events group by e) where c > 1'),
    ).toEqual([['$pageview', 3]])
  })

  it('joins tables explicitly', async () => {
    expect(
      await run(
        "select e.event, p.properties.email from events e join persons p on e.person_id = p.id where e.event != '$pageview' order by e.event",
      ),
    ).toEqual([
      ['purchase', 'bob@y.com'],
      ['signup', 'alice@x.com'],
    ])
    expect(
      await run(
        'select e.event, g.properties.name from events e join groups g on e.$group_0 = g.key order by e.event',
      ),
    ).toEqual([['purchase', 'Acme Inc']])
  })

  it('nests join chains so each level has one join', async () => {
    const sql = `
      select e.event, p.properties.email, g.properties.name, person.properties.plan
      from events e
      join persons p on e.person_id = p.id
      left join groups g on g.key = e.$group_0
      where e.timestamp < '2024-03-02'
      order by e.timestamp`
    expect(await run(sql)).toEqual([
      ['purchase', 'bob@y.com', 'Acme Inc', null],
      ['$pageview', 'alice@x.com', null, 'pro'],
      ['$pageview', 'bob@y.com', null, null],
    ])
  })

  it('inner joins that match nothing return nothing', async () => {
    const sql = `
      select person.properties.email, e.properties.$browser, g.key
      from events e join groups g on e.distinct_id = g.key`
    expect(await run(sql)).toEqual([])
    expect(
      await run("select 1, g.key from events e join groups g on e.event = g.key where e.event != ''"),
    ).toEqual([])
  })

  it('inlines CTEs', async () => {
    expect(
      await run("with pv as (select * from events where event = '$pageview') select count() from pv"),
    ).toEqual([[3]])
    expect(
      await run(
        "with pv as (select distinct_id from events where event = '$pageview'), x as (select distinct_id from pv where distinct_id = 'd1') select count() from x",
      ),
    ).toEqual([[2]])
    expect(await run("with 'signup' as name select count() from events where event = name")).toEqual([[1]])
  })

  it('runs Nullable constants inside the guarded read', async () => {
    // toDateTime of text is parseDateTimeBestEffortOrNull (Nullable): the bound goes inside, where the
    // index analysis runs over every project's granules (team B's rows are in the same table)
    const future = "select count() from events where timestamp < toDateTime('2100-01-01 00:00:00')"
    expect((await compileHogQL(future, { teamId: A })).clickhouse).toMatch(
      /PREWHERE team_id = \d+ AND \(`timestamp` < parseDateTimeBestEffortOrNull/,
    )
    expect(await run(future)).toEqual([[5]])
    expect(await run("select count() from events where timestamp < toDateTime('not a time')")).toEqual([[0]])
    // ordering with NULL is 0, so its negation keeps every row (docs/hogql.md, null-safe comparisons)
    expect(await run("select count() from events where not (timestamp >= toDateTime('not a time'))")).toEqual(
      [[5]],
    )
  })

  it('unions stay inside the team', async () => {
    expect(
      await run(
        "select properties.secret from events union all select properties.secret from events where properties.secret = 'team-b'",
      ),
    ).toEqual([[null], [null], [null], [null], [null]])
    expect(
      await run(
        "select event from (select event from events where event = 'signup' union all select 'x') order by event",
      ),
    ).toEqual([['signup'], ['x']])
    expect(
      await run('select event from events union distinct select event from events order by event'),
    ).toHaveLength(3)
  })

  it('array joins', async () => {
    expect(await run('select count() from events array join [1, 2] as x')).toEqual([[10]])
  })
})

describe('isolation', () => {
  it('reads only the team it was compiled for', async () => {
    expect(await run('select count() from events')).toEqual([[5]])
    expect(await run('select count() from events', { teamId: B })).toEqual([[1]])
    expect(await run('select properties.email as m from persons order by m', { teamId: B })).toEqual([
      ['eve@evil.com'],
      ['mallory@evil.com'],
    ])
  })

  it('cannot be escaped with aliases named like internals', async () => {
    await expect(run('select 0 as team_id, count() from events group by team_id')).rejects.toMatchObject({
      code: 'syntax_error',
    })
    // the parser itself refuses `team_id` as an alias; physical column names must not shadow either
    expect(
      await run(
        "select event as prop_values, properties.$browser as prop_keys from events where prop_keys = 'Safari'",
      ),
    ).toEqual([['$pageview', 'Safari']])
    expect(await run("select event as timestamp from events where timestamp = 'signup'")).toEqual([
      ['signup'],
    ])
    // an alias named like the column it is computed from: WHERE reads the alias, `events.event` the column
    expect(
      await run(
        "select concat(event, '!') as event, events.event as real from events where event = 'signup!'",
      ),
    ).toEqual([['signup!', 'signup']])
    expect(await run('select count() from events as person_overrides')).toEqual([[5]])
    expect(
      await run("select count() from events as events_person where events_person.event = 'signup'"),
    ).toEqual([[1]])
  })

  it("ignores other teams' overrides and persons", async () => {
    // team B overrides P2 -> PB and has a newer P1 row; team A must not see either
    expect(
      await run("select person_id, person.properties.email from events where event = 'purchase'"),
    ).toEqual([[P2, 'bob@y.com']])
  })

  it('refuses what it cannot guard', async () => {
    await expect(run('select * from system.tables')).rejects.toBeInstanceOf(HogQLError)
    await expect(run("select * from generateRandom('a UInt8')")).rejects.toMatchObject({
      code: 'table_function_not_allowed',
    })
    await expect(run('select 1 settings readonly = 0')).rejects.toMatchObject({
      code: 'settings_not_allowed',
    })
  })
})

// A versioned table's property is the newest version's value of that key (print-relations.ts reads
// it as a column of its own): a key the newest version dropped reads NULL even though an older
// version had it, alone or beside a read that needs the whole arrays (a property path).
describe('properties of the newest person version', () => {
  const C = uniqueTeamId() + 2
  const PX = '00000000-0000-4000-8000-0000000000c1'
  const PY = '00000000-0000-4000-8000-0000000000c2'
  beforeAll(async () => {
    await insertPersons(ch, [
      {
        team: C,
        id: PX,
        createdAt: '2024-01-01 00:00:00.000',
        properties: { plan: 'pro', tier: 'a' },
        version: 1,
      },
      { team: C, id: PX, createdAt: '2024-01-01 00:00:00.000', properties: { tier: 'b' }, version: 2 },
      {
        team: C,
        id: PY,
        createdAt: '2024-01-02 00:00:00.000',
        properties: { plan: 'free', list: [7, 8] },
        version: 1,
      },
    ])
  })

  it('reads each key from the newest version only', async () => {
    expect(
      await run('SELECT id, properties.plan, properties.tier FROM persons ORDER BY id', { teamId: C }),
    ).toEqual([
      [PX, null, 'b'],
      [PY, 'free', null],
    ])
    expect(await run(`SELECT count() FROM persons WHERE properties.plan = 'pro'`, { teamId: C })).toEqual([
      [0],
    ])
  })

  it('gives the same values beside a property path', async () => {
    const text = 'SELECT id, properties.plan, properties.list.2 FROM persons ORDER BY id'
    expect(await run(text, { teamId: C })).toEqual([
      [PX, null, null],
      [PY, 'free', '8'],
    ])
  })
})

import { describe, expect, it } from 'vitest'
import { type CompileOptions, compileHogQL, HogQLError } from '../../../src/hogql/index.ts'

const compile = (q: string, opts: Partial<CompileOptions> = {}) => compileHogQL(q, { teamId: 7, ...opts })

async function error(q: string, opts: Partial<CompileOptions> = {}): Promise<HogQLError> {
  try {
    await compile(q, opts)
  } catch (e) {
    if (e instanceof HogQLError) return e
    throw e
  }
  throw new Error('expected an error')
}

describe('properties', () => {
  it('print as exact JSON reads that read NULL when missing', async () => {
    const { clickhouse } = await compile('select properties.$browser from events')
    // Nullable(String): a string unquoted, other values as JSON text, a missing key NULL
    expect(clickhouse).toContain("JSONExtract(`events`.`properties`, '$browser', 'Nullable(String)')")
    expect(clickhouse).not.toMatch(/like|position|visitParam|match\(/i)
  })

  it('read nested paths key by key, however they are written', async () => {
    const { clickhouse } = await compile("select properties.a.b, properties['a']['b'] from events")
    expect(
      clickhouse.match(/JSONExtract\(`events`\.`properties`, 'a', 'b', 'Nullable\(String\)'\)/g)?.length,
    ).toBe(2)
  })

  it('compare numerically with numbers and as text with booleans', async () => {
    const { clickhouse } = await compile(
      'select 1 from events where properties.n > 3 and properties.ok = true',
    )
    expect(clickhouse).toMatch(
      /toFloat64OrNull\(JSONExtract\(`events`\.`properties`, 'n', 'Nullable\(String\)'\)\) > 3\)/,
    )
    expect(clickhouse).toMatch(/'ok'.*= 'true'\)/)
  })

  it('test missing keys with IS NULL', async () => {
    const { clickhouse } = await compile('select 1 from events where properties.x is null')
    expect(clickhouse).toMatch(/isNull\(JSONExtract\(/)
  })
})

describe('persons', () => {
  it('resolve person_id through the latest override', async () => {
    const { clickhouse } = await compile('select person_id from events')
    expect(clickhouse).toMatch(/FROM `person_overrides` PREWHERE team_id = 7 GROUP BY `old_person_id`/)
    expect(clickhouse).toContain('argMax(`override_person_id`, `version`)')
  })

  it('join the latest live person row only when its fields are used', async () => {
    const idOnly = await compile('select person.id from events')
    expect(idOnly.clickhouse).not.toContain('FROM `person` ')
    const props = await compile('select person.properties.email from events')
    expect(props.clickhouse).toMatch(
      /FROM `person` PREWHERE team_id = 7 GROUP BY `id` HAVING argMax\(`is_deleted`, `version`\) = 0/,
    )
  })
})

describe('names and output', () => {
  it('names columns by alias, field or expression text', async () => {
    const r = await compile(
      'select event, properties.$browser, count() as c, 1 + 2, person.properties.email from events group by 1, 2, 5',
    )
    expect(r.columns).toEqual(['event', '$browser', 'c', '1 + 2', 'email'])
    expect(r.types).toEqual(['String', 'Nullable(String)', 'UInt64', 'Int64', 'Nullable(String)'])
  })

  it('expands * to the documented event fields', async () => {
    const r = await compile('select * from events')
    expect(r.columns).toEqual([
      'uuid',
      'event',
      'properties',
      'timestamp',
      'distinct_id',
      'elements_chain',
      'created_at',
      '$session_id',
      '$group_0',
      '$group_1',
      '$group_2',
      '$group_3',
      '$group_4',
    ])
  })

  it('keeps an alias named like a column, and reads columns qualified', async () => {
    const r = await compile(
      "select toString(uuid) as event, events.event as real from events where event = 'x'",
    )
    expect(r.columns).toEqual(['event', 'real'])
    expect(r.clickhouse).toContain('toString(`events`.`uuid`) AS `event`')
    expect(r.clickhouse).toContain('`events`.`event` AS `real`')
    // WHERE uses the alias (HogQL semantics), which ClickHouse reads before the column
    expect(r.clickhouse).toContain("(`event` = 'x')")
  })

  it('resolves positional GROUP BY / ORDER BY to the select items', async () => {
    const r = await compile('select event, count() from events group by 1 order by 2 desc')
    expect(r.clickhouse).toMatch(/GROUP BY `event` ORDER BY `_c1` DESC/)
  })

  it('applies the default and maximum LIMIT', async () => {
    expect((await compile('select 1')).clickhouse).toMatch(/LIMIT 100$/)
    expect((await compile('select 1 limit 7')).clickhouse).toMatch(/LIMIT 7$/)
    expect((await compile('select 1 limit 90000')).clickhouse).toMatch(/LIMIT 50000$/)
    expect((await compile('select 1 limit 90', { maxLimit: 10 })).clickhouse).toMatch(/LIMIT 10$/)
    expect((await compile('select 1', { defaultLimit: 5 })).clickhouse).toMatch(/LIMIT 5$/)
    // PostHog's test_hogql_union_all_limits: each branch gets the default
    expect((await compile('select 1 union all select 2')).clickhouse).toMatch(
      /^SELECT \* FROM \(SELECT 1 AS `_c0` LIMIT 100\) UNION ALL SELECT \* FROM \(SELECT 2 AS `_c0` LIMIT 100\)$/,
    )
    expect((await error('select event from events limit event')).code).toBe('bad_limit')
    expect((await error('select 1 limit 1 - 2')).code).toBe('bad_limit')
  })

  // PostHog's test_select_limit / test_select_offset: LIMIT and OFFSET take constant expressions,
  // and a LIMIT is capped at the maximum (PostHog prints min2(max, expr)).
  it('computes whole-number LIMIT arithmetic and prints other constant expressions capped', async () => {
    expect((await compile('select 1 limit 1 + 1 offset 2 * 3')).clickhouse).toMatch(/LIMIT 6, 2$/)
    expect((await compile('select 1 limit (select 100000000)')).clickhouse).toMatch(
      /LIMIT least\(50000, \(SELECT 100000000 AS `_c0`\)\)$/,
    )
    expect((await compile("select 1 limit 3 offset toInt('1')")).clickhouse).toMatch(
      /LIMIT 3 OFFSET accurateCastOrNull\('1', 'Int64'\)$/,
    )
  })

  it('prints timestamps raw in comparisons and in the project zone elsewhere', async () => {
    const r = await compile("select toDate(timestamp) from events where timestamp > '2024-01-01'", {
      timezone: 'Europe/Berlin',
    })
    expect(r.clickhouse).toContain("toDate(toTimeZone(`events`.`timestamp`, 'Europe/Berlin'))")
    // a comparison of a column with a constant runs inside the guarded read, on the bare column
    expect(r.clickhouse).toContain(
      "PREWHERE team_id = 7 AND (`timestamp` > parseDateTime64BestEffort('2024-01-01', 6, 'Europe/Berlin'))",
    )
  })

  it('reads timestamps as the DateTime64(6) column in the project zone', async () => {
    const r = await compile('select timestamp from events', { timezone: 'Asia/Tokyo' })
    expect(r.types).toEqual(["DateTime64(6, 'Asia/Tokyo')"])
    expect(r.clickhouse).toContain("toTimeZone(`events`.`timestamp`, 'Asia/Tokyo')")
  })
})

describe('errors', () => {
  it('report syntax errors with a position', async () => {
    const e = await error('select from where')
    expect(e.code).toBe('syntax_error')
    expect(typeof e.start).toBe('number')
  })

  it('report unknown fields and tables at their position', async () => {
    const q = 'select event, nope from events'
    const e = await error(q)
    expect(e.code).toBe('unknown_field')
    expect(q.slice(e.start, e.end)).toBe('nope')
    const t = 'select 1 from nowhere'
    const e2 = await error(t)
    expect(e2.code).toBe('unknown_table')
    expect(t.slice(e2.start, e2.end)).toBe('nowhere')
  })

  it('report unknown functions at their position', async () => {
    const q = 'select event, fooBar(1) from events'
    const e = await error(q)
    expect(e.code).toBe('function_not_allowed')
    expect(q.slice(e.start, e.end)).toBe('fooBar(1)')
  })

  it('report ambiguous fields', async () => {
    expect((await error('select properties from events e join persons p on e.person_id = p.id')).code).toBe(
      'ambiguous_field',
    )
  })

  it('report placeholders without a value', async () => {
    expect((await error('select {nope}')).code).toBe('missing_placeholder')
  })
})

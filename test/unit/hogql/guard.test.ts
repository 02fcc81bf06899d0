// The structural team guard as printed (src/hogql/guard.ts): every table read is a guarded subquery,
// and only comparisons of the table's own columns with constants ever go inside it.
import { describe, expect, it } from 'vitest'
import { compileHogQL } from '../../../src/hogql/index.ts'
import { physicalTables } from '../../../src/hogql/schema.ts'
import { guardedReads, PHYSICAL, unguardedReads } from './sql-shape.ts'

const TEAM = 42
const sql = async (q: string) => (await compileHogQL(q, { teamId: TEAM })).clickhouse

describe('guarded reads', () => {
  it('covers every physical table the schema reads', () => {
    for (const t of physicalTables()) expect(PHYSICAL).toContain(t)
  })

  it.each([
    'select count() from events',
    'select count() from persons',
    'select count() from person_distinct_ids',
    'select count() from groups',
    'select count() from feature_flag_usage',
    'select person.properties.a, person_id from events',
  ])('reads through PREWHERE and the LIMIT barrier: %s', async (q) => {
    const printed = await sql(q)
    expect(unguardedReads(printed, TEAM)).toEqual([])
    expect(guardedReads(printed).length).toBeGreaterThan(0)
  })

  it.each([
    'select count() from events',
    'select count() from persons',
    'select count() from person_distinct_ids',
    'select count() from groups',
    'select person.properties.a, person_id from events',
  ])('reads through PREWHERE and the LIMIT barrier: %s', async (q) => {
    const printed = await sql(q)
    expect(unguardedReads(printed, TEAM)).toEqual([])
    expect(printed).toContain('LIMIT 18446744073709551615')
  })

  it('never reads the cross-project feature_flag_usage view', async () => {
    const printed = await sql('select flag, sum(calls) from feature_flag_usage group by flag')
    expect(printed).not.toMatch(/FROM `feature_flag_usage`/)
    // events (twice: calls and carried properties) and the overrides, each guarded
    expect(guardedReads(printed)).toHaveLength(3)
  })

  it('keeps user expressions out of the guarded read', async () => {
    const printed = await sql(
      "select count() from events where toInt(properties.n) = 1 and intDiv(1, length(distinct_id)) = 1 and event = 'x' and timestamp > '2024-01-01' and properties.a = 'b'",
    )
    const [inside] = guardedReads(printed)
    // the two comparisons of bare columns with constants go inside, for the partition key and index
    expect(inside).toMatch(/\(`event` = 'x'\)/)
    expect(inside).toMatch(/`timestamp` > parseDateTime64BestEffort/)
    expect(inside).not.toMatch(/accurateCastOrNull|intDiv|prop_values`?\)|arrayElement|indexOf/)
    expect(printed).toMatch(/\) AS `events` WHERE .*accurateCastOrNull.*intDiv/)
  })

  it('keeps conditions on a left-joined table and on non-key columns of versioned tables outside', async () => {
    const joined = await sql(
      "select count() from events e left join persons p on e.person_id = p.id where p.created_at > '2024-01-01'",
    )
    for (const read of guardedReads(joined)) expect(read).not.toMatch(/created_at` >/)
    const persons = await sql(
      "select count() from persons where created_at > '2024-01-01' and id = '00000000-0000-4000-8000-000000000001'",
    )
    const [inside] = guardedReads(persons)
    expect(inside).toMatch(/^ AND \(`id` = '00000000-0000-4000-8000-000000000001'\) GROUP BY `id`/)
    expect(inside).not.toMatch(/created_at` >/)
  })

  it('moves comparisons with Nullable constants inside', async () => {
    const printed = await sql(
      "select count() from events where timestamp < toDateTime('2024-02-01 00:00:00')",
    )
    const [inside] = guardedReads(printed)
    expect(inside).toMatch(/^ AND .*`timestamp` < parseDateTimeBestEffortOrNull\(/)
  })
})

describe('conversions never throw', () => {
  it("prints PostHog's forms", async () => {
    const q = 'select toInt(event), toFloat(event), toUUID(event), toDate(event) from events'
    const printed = await sql(q)
    expect(printed).toContain("accurateCastOrNull(`events`.`event`, 'Int64')")
    expect(printed).toContain("accurateCastOrNull(`events`.`event`, 'Float64')")
    expect(printed).toContain('toUUIDOrNull(toString(`events`.`event`))')
    expect(printed).toContain('toDateOrNull(toString(`events`.`event`))')
    expect(printed).not.toMatch(/\btoInt64\(|\btoFloat64\(/)
  })

  it('types arraySort as the array it sorts, so toInt of its element is not a throwing toInt64', async () => {
    const printed = await sql(
      "select toInt(arrayElement(arraySort((x, y) -> y, [if(distinct_id in ('b'), '1', properties)], [1]), 1)) from events",
    )
    expect(printed).toContain('accurateCastOrNull(arrayElement(arraySort(')
  })

  it('keeps a literal UUID as it is', async () => {
    expect(await sql("select toUUID('00000000-0000-4000-8000-000000000001')")).toContain(
      "toUUID('00000000-0000-4000-8000-000000000001')",
    )
  })
})

describe('window functions', () => {
  const q = 'select event, row_number() over (partition by event order by timestamp) from events'

  it('print as ClickHouse reads them', async () => {
    expect(await sql(q)).toContain(
      'row_number() OVER (PARTITION BY `events`.`event` ORDER BY `events`.`timestamp` ASC)',
    )
    expect(await sql('select sum(1) over w from events window w as (partition by event)')).toMatch(/ OVER /)
  })
})

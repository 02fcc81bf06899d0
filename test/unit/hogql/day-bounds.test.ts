// Sort-key bounds derived from time bounds (src/hogql/guard.ts). The equal answers on the real
// servers are test/integration/queries/day-bounds.test.ts; here, which forms are recognised and
// what each one gives, written out by hand.
import { describe, expect, it } from 'vitest'
import { compileHogQL } from '../../../src/hogql/index.ts'
import { dayKeyBounds, guardedTable, timestampBoundsOfDay } from '../../../src/hogql/guard.ts'

const C = "parseDateTimeBestEffort('2026-03-08 10:00:00', 'America/New_York')"
const UTC_DAY = `toTimeZone(${C}, 'UTC')`

describe('dayKeyBounds: timestamp bounds → toDate(timestamp) bounds', () => {
  it.each([
    [`(\`timestamp\` >= ${C})`, `toDate(\`timestamp\`) >= toDate(${UTC_DAY})`],
    [`(\`timestamp\` > ${C})`, `toDate(\`timestamp\`) >= toDate(${UTC_DAY} + 1)`],
    [`(\`timestamp\` <= ${C})`, `toDate(\`timestamp\`) <= toDate(${UTC_DAY})`],
    [`(\`timestamp\` < ${C})`, `toDate(\`timestamp\`) <= toDate(${UTC_DAY} - 1)`],
    [`(\`timestamp\` = ${C})`, `toDate(\`timestamp\`) = toDate(${UTC_DAY})`],
    // constant first: the comparison turns around
    [`(${C} > \`timestamp\`)`, `toDate(\`timestamp\`) <= toDate(${UTC_DAY} - 1)`],
    [
      "`timestamp` >= toDateTime('2026-01-01 00:00:00')",
      "toDate(`timestamp`) >= toDate(toTimeZone(toDateTime('2026-01-01 00:00:00'), 'UTC'))",
    ],
  ])('%s', (cond, bound) => {
    expect(dayKeyBounds('`events`', [cond])).toEqual([bound])
  })

  it('reads every conjunct of an AND', () => {
    expect(
      dayKeyBounds('events', [`(\`timestamp\` >= ${C}) AND (\`event\` = 'x') AND (\`timestamp\` < ${C})`]),
    ).toEqual([
      `toDate(\`timestamp\`) >= toDate(${UTC_DAY})`,
      `toDate(\`timestamp\`) <= toDate(${UTC_DAY} - 1)`,
    ])
  })

  it.each([
    // not a bound on the bare column, or not a literal DateTime
    [`(\`timestamp\` != ${C})`],
    [`((\`timestamp\` >= ${C}) OR (\`event\` = 'x'))`],
    ["(`timestamp` >= toTimeZone(now(), 'UTC'))"],
    ['(`timestamp` >= `created_at`)'],
    ['(`timestamp` >= toDateTime(`created_at`))'],
    ["(`timestamp` >= parseDateTimeBestEffort('2026-01-01', 'UTC') + 1)"],
    ["(`timestamp` >= toDate('2026-01-01'))"],
    ["(`created_at` >= parseDateTimeBestEffort('2026-01-01', 'UTC'))"],
    ["(toStartOfDay(`timestamp`) >= parseDateTimeBestEffort('2026-01-01', 'UTC'))"],
    // an operator inside a literal is not a comparison
    ["(`event` = 'timestamp >= 1')"],
  ])('leaves alone %s', (cond) => {
    expect(dayKeyBounds('events', [cond])).toEqual([])
  })

  it('only for tables sorted by day', () => {
    expect(dayKeyBounds('persons', [`(\`timestamp\` >= ${C})`])).toEqual([])
  })

  it('joins the guard of events, after the conditions it comes from', () => {
    expect(guardedTable('`events`', 7, '`event`', '', [`(\`timestamp\` >= ${C})`])).toBe(
      `(SELECT \`event\` FROM \`events\` PREWHERE team_id = 7 AND (\`timestamp\` >= ${C}) AND toDate(\`timestamp\`) >= toDate(${UTC_DAY}) LIMIT 18446744073709551615)`,
    )
  })

  it('is printed for insight date ranges', async () => {
    const { clickhouse } = await compileHogQL(
      "select count() from events where timestamp >= '2026-01-01' and timestamp < '2026-02-01'",
      { teamId: 3, timezone: 'Europe/Paris' },
    )
    expect(clickhouse).toContain(
      "toDate(`timestamp`) >= toDate(toTimeZone(parseDateTimeBestEffort('2026-01-01', 'Europe/Paris'), 'UTC'))",
    )
    expect(clickhouse).toContain(
      "toDate(`timestamp`) <= toDate(toTimeZone(parseDateTimeBestEffort('2026-02-01', 'Europe/Paris'), 'UTC') - 1)",
    )
  })
})

describe('timestampBoundsOfDay: day bounds → timestamp bounds', () => {
  const NY = "toTimeZone(`timestamp`, 'America/New_York')"
  const start = (day: string, zone: string) => `toDateTime(${day}, '${zone}')`
  it.each([
    [
      `toDate(${NY}) >= toDate('2026-03-08')`,
      [`\`timestamp\` >= ${start("toDate(toDate('2026-03-08'))", 'America/New_York')}`],
    ],
    [
      `toDate(${NY}) > toDate('2026-03-08')`,
      [`\`timestamp\` >= ${start("toDate(toDate('2026-03-08')) + 1", 'America/New_York')}`],
    ],
    [
      `toDate(${NY}) <= toDate('2026-03-08')`,
      [`\`timestamp\` < ${start("toDate(toDate('2026-03-08')) + 1", 'America/New_York')}`],
    ],
    [
      `toDate(${NY}) < toDate('2026-03-08')`,
      [`\`timestamp\` < ${start("toDate(toDate('2026-03-08'))", 'America/New_York')}`],
    ],
    [
      `(toDate(\`timestamp\`) = '2026-03-08')`,
      [
        `\`timestamp\` >= ${start("toDate('2026-03-08')", 'UTC')}`,
        `\`timestamp\` < ${start("toDate('2026-03-08') + 1", 'UTC')}`,
      ],
    ],
    ["'2026-03-08' <= toDate(`timestamp`)", [`\`timestamp\` >= ${start("toDate('2026-03-08')", 'UTC')}`]],
    [`toStartOfDay(${NY}) >= ${C}`, [`\`timestamp\` >= ${C}`]],
    [`toStartOfDay(${NY}) > ${C}`, [`\`timestamp\` > ${C}`]],
    [
      `toStartOfDay(${NY}) < ${C}`,
      [`\`timestamp\` < ${start(`toDate(toTimeZone(${C}, 'America/New_York')) + 1`, 'America/New_York')}`],
    ],
  ])('%s', (cond, bounds) => {
    expect(timestampBoundsOfDay('events', cond)).toEqual(bounds)
  })

  it.each([
    [`toDate(${NY}) != toDate('2026-03-08')`],
    // a DateTime against a day, a day against a DateTime: zone conversions this does not model
    [`toDate(${NY}) >= ${C}`],
    [`toStartOfDay(${NY}) >= '2026-03-08'`],
    ["toDate(`created_at`) >= toDate('2026-03-08')"],
    ["toDate(toTimeZone(`timestamp`, `zone`)) >= toDate('2026-03-08')"],
    ["toDate(`timestamp` + 3600) >= toDate('2026-03-08')"],
    ['toDate(`timestamp`) >= toDate(`created_at`)'],
    ["toDate(`timestamp`) >= toDateOrNull(toString('2026-03-08'))"],
    ["toStartOfWeek(`timestamp`) >= toDate('2026-03-08')"],
  ])('leaves alone %s', (cond) => {
    expect(timestampBoundsOfDay('events', cond)).toEqual([])
  })
})

// Sort-key bounds derived from time bounds (src/hogql/guard.ts). The equal answers on the real
// servers are test/integration/queries/day-bounds.test.ts; here, which forms are recognised and
// what each one gives, written out by hand.
import { describe, expect, it } from 'vitest'
import { compileHogQL } from '../../../src/hogql/index.ts'
import { dayKeyBounds, guardedTable, timestampBoundsOfDay } from '../../../src/hogql/guard.ts'

const C = "parseDateTimeBestEffort('2026-03-08 10:00:00', 'America/New_York')"
const UTC_DAY = `toTimeZone(${C}, 'UTC')`
// `timestamp > C` ⇔ `timestamp >= C + 1 µs` (and `<` one µs before): the column holds microseconds
const AFTER = `toTimeZone(toDateTime64(${C}, 6), 'UTC') + toIntervalMicrosecond(1)`
const BEFORE = `toTimeZone(toDateTime64(${C}, 6), 'UTC') - toIntervalMicrosecond(1)`

describe('dayKeyBounds: timestamp bounds → toDate(timestamp) bounds', () => {
  it.each([
    [`(\`timestamp\` >= ${C})`, `toDate(\`timestamp\`) >= toDate(${UTC_DAY})`],
    [`(\`timestamp\` > ${C})`, `toDate(\`timestamp\`) >= toDate(${AFTER})`],
    [`(\`timestamp\` <= ${C})`, `toDate(\`timestamp\`) <= toDate(${UTC_DAY})`],
    [`(\`timestamp\` < ${C})`, `toDate(\`timestamp\`) <= toDate(${BEFORE})`],
    [`(\`timestamp\` = ${C})`, `toDate(\`timestamp\`) = toDate(${UTC_DAY})`],
    // constant first: the comparison turns around
    [`(${C} > \`timestamp\`)`, `toDate(\`timestamp\`) <= toDate(${BEFORE})`],
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
    ).toEqual([`toDate(\`timestamp\`) >= toDate(${UTC_DAY})`, `toDate(\`timestamp\`) <= toDate(${BEFORE})`])
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
      "toDate(`timestamp`) >= toDate(toTimeZone(parseDateTime64BestEffort('2026-01-01', 6, 'Europe/Paris'), 'UTC'))",
    )
    expect(clickhouse).toContain(
      "toDate(`timestamp`) <= toDate(toTimeZone(toDateTime64(parseDateTime64BestEffort('2026-02-01', 6, 'Europe/Paris'), 6), 'UTC') - toIntervalMicrosecond(1))",
    )
  })
})

describe('timestampBoundsOfDay: day bounds → timestamp bounds (and their key bounds)', () => {
  const NY = "toTimeZone(`timestamp`, 'America/New_York')"
  const D = "toDate('2026-03-08')"
  const nyStart = (shift: string) => `toDateTime(${D}${shift}, 'America/New_York')`
  const utcStart = (shift: string) => `toDateTime(${D}${shift}, 'UTC')`
  // the key bound of `timestamp <op> dt`; `tick`: one microsecond after (+) or before (-) dt
  const key = (op: string, dt: string, tick?: '+' | '-') =>
    tick
      ? `toDate(\`timestamp\`) ${op} toDate(toTimeZone(toDateTime64(${dt}, 6), 'UTC') ${tick} toIntervalMicrosecond(1))`
      : `toDate(\`timestamp\`) ${op} toDate(toTimeZone(${dt}, 'UTC'))`
  it.each([
    [`toDate(${NY}) >= ${D}`, [`\`timestamp\` >= ${nyStart('')}`, key('>=', nyStart(''))]],
    [`toDate(${NY}) > ${D}`, [`\`timestamp\` >= ${nyStart(' + 1')}`, key('>=', nyStart(' + 1'))]],
    [`toDate(${NY}) <= ${D}`, [`\`timestamp\` < ${nyStart(' + 1')}`, key('<=', nyStart(' + 1'), '-')]],
    [`toDate(${NY}) < ${D}`, [`\`timestamp\` < ${nyStart('')}`, key('<=', nyStart(''), '-')]],
    [
      "(toDate(`timestamp`) = '2026-03-08')",
      [
        `\`timestamp\` >= ${utcStart('')}`,
        key('>=', utcStart('')),
        `\`timestamp\` < ${utcStart(' + 1')}`,
        key('<=', utcStart(' + 1'), '-'),
      ],
    ],
    ["'2026-03-08' <= toDate(`timestamp`)", [`\`timestamp\` >= ${utcStart('')}`, key('>=', utcStart(''))]],
    [`toStartOfDay(${NY}) >= ${C}`, [`\`timestamp\` >= ${C}`, key('>=', C)]],
    [`toStartOfDay(${NY}) > ${C}`, [`\`timestamp\` > ${C}`, key('>=', C, '+')]],
    [
      `toStartOfDay(${NY}) < ${C}`,
      [
        `\`timestamp\` < toDateTime(toDate(toTimeZone(${C}, 'America/New_York')) + 1, 'America/New_York')`,
        key('<=', `toDateTime(toDate(toTimeZone(${C}, 'America/New_York')) + 1, 'America/New_York')`, '-'),
      ],
    ],
    [
      `toStartOfInterval(${NY}, toIntervalDay(7)) <= ${C}`,
      [
        `\`timestamp\` < toDateTime(toDate(toTimeZone(${C}, 'America/New_York')) + 7, 'America/New_York')`,
        key('<=', `toDateTime(toDate(toTimeZone(${C}, 'America/New_York')) + 7, 'America/New_York')`, '-'),
      ],
    ],
    [
      `toStartOfInterval(\`timestamp\`, toIntervalDay(1)) > ${C}`,
      [`\`timestamp\` > ${C}`, key('>=', C, '+')],
    ],
    // shorter buckets: an hour of slack each way
    [
      `toStartOfInterval(${NY}, toIntervalMinute(30)) = ${C}`,
      [
        `\`timestamp\` >= ${C} - 3600`,
        key('>=', `${C} - 3600`),
        `\`timestamp\` < ${C} + 5400`,
        key('<=', `${C} + 5400`, '-'),
      ],
    ],
    [`toStartOfHour(${NY}) < ${C}`, [`\`timestamp\` < ${C} + 7200`, key('<=', `${C} + 7200`, '-')]],
    [
      `toStartOfFifteenMinutes(\`timestamp\`) > ${C}`,
      [`\`timestamp\` >= ${C} - 3600`, key('>=', `${C} - 3600`)],
    ],
  ])('%s', (cond, bounds) => {
    expect(timestampBoundsOfDay('events', cond)).toEqual(bounds)
  })

  it('are not derived again by the guard', () => {
    const also = timestampBoundsOfDay('events', `toStartOfDay(${NY}) >= ${C}`)
    expect(guardedTable('`events`', 7, '1', '', also)).toBe(
      `(SELECT 1 FROM \`events\` PREWHERE team_id = 7 AND ${also.join(' AND ')} LIMIT 18446744073709551615)`,
    )
  })

  it.each([
    [`toDate(${NY}) != ${D}`],
    // a DateTime against a day, a day against a DateTime: zone conversions this does not model
    [`toDate(${NY}) >= ${C}`],
    [`toStartOfDay(${NY}) >= '2026-03-08'`],
    [`toStartOfDay(${NY}) >= ${D}`],
    [`toDate(\`created_at\`) >= ${D}`],
    [`toDate(toTimeZone(\`timestamp\`, \`zone\`)) >= ${D}`],
    [`toDate(\`timestamp\` + 3600) >= ${D}`],
    ['toDate(`timestamp`) >= toDate(`created_at`)'],
    ["toDate(`timestamp`) >= toDateOrNull(toString('2026-03-08'))"],
    ["toDate(`timestamp`) >= toDate(toDate('2026-03-08'))"],
    [`toStartOfWeek(\`timestamp\`) >= ${D}`],
    // weeks and months are Dates (their zone conversions are not modelled); no interval, no bound
    [`toStartOfInterval(\`timestamp\`, toIntervalWeek(1)) >= ${C}`],
    [`toStartOfInterval(\`timestamp\`, toIntervalMonth(1)) >= ${C}`],
    [`toStartOfInterval(\`timestamp\`, toIntervalDay(0)) >= ${C}`],
    [`toStartOfInterval(\`timestamp\`, toIntervalDay(\`n\`)) >= ${C}`],
    [`toStartOfHour(${NY}) >= '2026-03-08 10:00:00'`],
    [`(toDate(\`timestamp\`) >= ${D}) OR (\`event\` = 'x')`],
  ])('leaves alone %s', (cond) => {
    expect(timestampBoundsOfDay('events', cond)).toEqual([])
  })

  it('only for tables sorted by day', () => {
    expect(timestampBoundsOfDay('persons', `toDate(\`timestamp\`) >= ${D}`)).toEqual([])
  })
})

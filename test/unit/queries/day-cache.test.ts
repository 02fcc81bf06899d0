// Which trends buckets may come from stored values, and how the statement is narrowed around them
// (src/queries/insights/trends/buckets.ts, query.ts spansOf, src/queries/day-state.ts stillValid).
import { describe, expect, it } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import { type DayState, dayStateSql, epochOf, stillValid } from '../../../src/queries/day-state.ts'
import { trendsBucketCells } from '../../../src/queries/insights/trends/buckets.ts'
import { spansOf } from '../../../src/queries/insights/trends/query.ts'
import { resolveDateRange, wallString } from '../../../src/queries/insights/common/index.ts'

const utc = { id: 1, timezone: 'UTC' } as Project
const berlin = { id: 1, timezone: 'Europe/Berlin' } as Project
// 2026-03-31 10:00 UTC (Tuesday)
const NOW = Date.UTC(2026, 2, 31, 10)
const trends = (extra: object = {}) => ({
  kind: 'TrendsQuery',
  series: [{ event: '$pageview' }],
  dateRange: { date_from: '-3d' },
  ...extra,
})

describe('trendsBucketCells', () => {
  it('offers the closed days of the range, each with its UTC day', () => {
    const cells = trendsBucketCells(trends(), utc, '26.7.2.1', NOW)!
    expect(cells.map((c) => c.id)).toEqual(['0|0'])
    expect(cells[0]!.total).toBe(4)
    expect(cells[0]!.buckets).toEqual([
      { start: '2026-03-28 00:00:00', days: ['2026-03-28'] },
      { start: '2026-03-29 00:00:00', days: ['2026-03-29'] },
      { start: '2026-03-30 00:00:00', days: ['2026-03-30'] },
    ])
  })

  it('maps a day in another zone to the two UTC days it spans, and skips the DST change', () => {
    // Berlin moved to summer time on 2026-03-29: that day and the day before are left out
    const [cell] = trendsBucketCells(trends(), berlin, '26.7.2.1', NOW)!
    expect(cell!.buckets).toEqual([{ start: '2026-03-30 00:00:00', days: ['2026-03-29', '2026-03-30'] }])
  })

  it('gives the same series key to the same series in other ranges and displays', () => {
    const a = trendsBucketCells(trends(), utc, '26.7.2.1', NOW)![0]!.series
    const b = trendsBucketCells(
      trends({ dateRange: { date_from: '-30d' }, trendsFilter: { display: 'ActionsLineGraphCumulative' } }),
      utc,
      '26.7.2.1',
      NOW,
    )![0]!.series
    expect(b).toBe(a)
    expect(trendsBucketCells(trends(), utc, '26.7.3.1', NOW)![0]!.series).not.toBe(a)
    const filtered = trends({ properties: [{ key: '$browser', value: 'Chrome', type: 'event' }] })
    expect(trendsBucketCells(filtered, utc, '26.7.2.1', NOW)![0]!.series).not.toBe(a)
  })

  it('offers nothing for shapes whose buckets depend on more than their own events', () => {
    const none = (extra: object) => trendsBucketCells(trends(extra), utc, '26.7.2.1', NOW)
    expect(none({ breakdownFilter: { breakdown: '$browser' } })).toBeUndefined()
    expect(none({ trendsFilter: { display: 'BoldNumber' } })).toBeUndefined()
    expect(none({ series: [{ event: 'x', math: 'weekly_active' }] })).toBeUndefined()
    expect(none({ series: [{ event: 'x', math: 'hogql', math_hogql: 'count()' }] })).toBeUndefined()
    expect(none({ properties: [{ key: 'plan', value: 'pro', type: 'person' }] })).toBeUndefined()
    expect(
      none({ series: [{ event: 'x', properties: [{ key: 'id', value: 1, type: 'cohort' }] }] }),
    ).toBeUndefined()
    expect(none({ interval: 'minute' })).toBeUndefined()
    expect(none({ dateRange: { date_from: 'all' } })).toBeUndefined()
    const cumulativeUnique = {
      series: [{ event: 'x', math: 'dau' }],
      trendsFilter: { display: 'ActionsLineGraphCumulative' },
    }
    expect(none(cumulativeUnique)).toBeUndefined()
    // one cached series beside one that is not
    const mixed = none({ series: [{ event: 'x', math: 'weekly_active' }, { event: 'y' }] })
    expect(mixed?.map((c) => c.id)).toEqual(['0|1'])
  })

  it('leaves out a partial first week', () => {
    const weeks = trendsBucketCells(
      trends({ interval: 'week', dateRange: { date_from: '-14d' } }),
      utc,
      '26.7.2.1',
      NOW,
    )
    // range from Tue 2026-03-17: the week of Sun 03-15 is partial, 03-22 whole and closed, 03-29 open
    expect(weeks![0]!.buckets.map((b) => b.start)).toEqual(['2026-03-22 00:00:00'])
  })
})

describe('spansOf', () => {
  const r = resolveDateRange({ date_from: '-5d' }, 'day', 'UTC', { now: NOW })
  const d = (n: number) => `2026-03-${String(n).padStart(2, '0')} 00:00:00`

  it('computes the runs of buckets not held, from the range bounds at its ends', () => {
    const { ranges, skipped } = spansOf(r, new Set([d(26), d(27), d(29)]))
    expect(skipped).toEqual([d(26), d(27), d(29)])
    expect(ranges.map((x) => [wallString(x.lower), wallString(x.to)])).toEqual([
      ['2026-03-28 00:00:00', '2026-03-28 23:59:59'],
      ['2026-03-30 00:00:00', '2026-03-31 23:59:59'],
    ])
  })

  it('reads one span when there are too many', () => {
    const { ranges, skipped } = spansOf(r, new Set([d(27), d(29)]))
    expect(ranges).toHaveLength(3)
    expect(skipped).toEqual([d(27), d(29)])
    const many = resolveDateRange({ date_from: '-12d' }, 'day', 'UTC', { now: NOW })
    const held = new Set([d(20), d(22), d(24), d(26), d(28)])
    const one = spansOf(many, held)
    expect(one.ranges.map((x) => [wallString(x.lower), wallString(x.to)])).toEqual([
      ['2026-03-19 00:00:00', '2026-03-31 23:59:59'],
    ])
    expect(one.skipped).toEqual([])
  })
})

describe('stillValid', () => {
  const state: DayState = {
    asOf: 1000,
    base: '["MergeTree/1","4/0","0/0"]',
    partitions: new Map([
      ['202603', '202603:7'],
      ['202604', '202604:9'],
    ]),
    personOverrides: false,
    changed: new Map([['2026-03-29', 900]]),
    everything: 0,
  }
  const march = epochOf(state, ['2026-03-29'])

  it('holds while no change at or after the value reached its days, in the same epoch', () => {
    expect(stillValid([5, 950, march], ['2026-03-29'], state)).toBe(true)
    expect(stillValid([5, 900, march], ['2026-03-29'], state)).toBe(false)
    expect(
      stillValid([5, 950, march], ['2026-03-28', '2026-03-29'], {
        ...state,
        changed: new Map([['2026-03-28', 960]]),
      }),
    ).toBe(false)
    expect(stillValid([5, 950, 'e0'], ['2026-03-29'], state)).toBe(false)
    expect(stillValid([5, 950, march], ['2026-03-29'], { ...state, everything: 950 })).toBe(false)
  })

  it("holds for no value when the days' changes were not read (a force_ request's state)", () => {
    expect(stillValid([5, 950, march], ['2026-03-28'], { ...state, changed: undefined })).toBe(false)
  })

  it("holds when another month's partition appears, not when its own month's is dropped or replaced", () => {
    const may = new Map([...state.partitions, ['202605', '202605:12']])
    expect(stillValid([5, 950, march], ['2026-03-29'], { ...state, partitions: may })).toBe(true)
    const dropped = new Map([['202604', '202604:9']])
    expect(stillValid([5, 950, march], ['2026-03-29'], { ...state, partitions: dropped })).toBe(false)
    // dropped, then rows again: the same id with a later lowest block
    const again = new Map([...state.partitions, ['202603', '202603:15']])
    expect(stillValid([5, 950, march], ['2026-03-29'], { ...state, partitions: again })).toBe(false)
    // a mutation or a merge changes the base, not the partitions
    expect(
      stillValid([5, 950, march], ['2026-03-29'], { ...state, base: '["MergeTree/1","5/0","0/0"]' }),
    ).toBe(false)
  })
})

describe('epochOf', () => {
  const state: DayState = {
    asOf: 1000,
    base: 'b',
    partitions: new Map([['202603', '202603:7']]),
    personOverrides: false,
    changed: new Map(),
    everything: 0,
  }

  it("names the months of a bucket's days, each once, whether its partition exists or not", () => {
    // a week over a month's end: both months
    const week = ['2026-03-30', '2026-03-31', '2026-04-01']
    expect(epochOf(state, week)).toBe(epochOf(state, ['2026-04-02', '2026-03-01']))
    expect(epochOf(state, week)).not.toBe(epochOf(state, ['2026-03-30']))
    expect(epochOf({ ...state, partitions: new Map([['202604', '202604:3']]) }, ['2026-03-30'])).not.toBe(
      epochOf(state, ['2026-03-30']),
    )
    expect(epochOf(state, ['2026-03-30'])).toMatch(/^[0-9a-f]{16}$/)
  })
})

describe('dayStateSql', () => {
  it("reads the days' changes only when asked", () => {
    expect(dayStateSql(7, '2026-03-01', '2026-03-30')).toContain('FROM events_changed_days ')
    const storeOnly = dayStateSql(7, '2026-03-01', '2026-03-30', false)
    expect(storeOnly).not.toContain('FROM events_changed_days ')
    expect(storeOnly).toContain('person_overrides')
  })
})

// Date ranges as PostHog resolves them (query_date_range.py, relative_date_parse), worked out by
// hand for a fixed "now": 2024-01-10 15:00 UTC = 10:00 in New York.
import { describe, expect, it } from 'vitest'
import {
  bucketsOf,
  dateString,
  labelOf,
  previousPeriod,
  resolveDateRange,
  wallString,
} from '../../../../src/queries/insights/common/index.ts'

const NOW = Date.parse('2024-01-10T15:00:00Z')
const NY = 'America/New_York'
const range = (dr: Record<string, unknown>, interval: 'hour' | 'day' | 'week' | 'month' = 'day', now = NOW) =>
  resolveDateRange(dr, interval, NY, { now })

describe('date ranges in the project time zone', () => {
  it('-7d: from the start of the day 7 days ago to the end of today (8 days)', () => {
    const r = range({ date_from: '-7d' })
    expect(wallString(r.from)).toBe('2024-01-03 00:00:00')
    expect(wallString(r.to)).toBe('2024-01-10 23:59:59')
    expect(bucketsOf(r).map(dateString)).toEqual([
      '2024-01-03',
      '2024-01-04',
      '2024-01-05',
      '2024-01-06',
      '2024-01-07',
      '2024-01-08',
      '2024-01-09',
      '2024-01-10',
    ])
  })

  it('-1mStart and dStart', () => {
    expect(wallString(range({ date_from: '-1mStart' }).from)).toBe('2023-12-01 00:00:00')
    expect(wallString(range({ date_from: 'dStart' }).from)).toBe('2024-01-10 00:00:00')
    expect(wallString(range({ date_from: '-1y', date_to: '-1dEnd' }).to)).toBe('2024-01-09 23:59:59')
  })

  it('-24h by hour reads from the hour 24 hours ago to the end of this hour', () => {
    const r = range({ date_from: '-24h' }, 'hour')
    expect(wallString(r.from)).toBe('2024-01-09 10:00:00')
    expect(wallString(r.lower)).toBe('2024-01-09 10:00:00')
    expect(wallString(r.to)).toBe('2024-01-10 10:59:59')
    expect(bucketsOf(r)).toHaveLength(25)
  })

  it('-24h by day reads from the exact hour, not the start of the day', () => {
    const r = range({ date_from: '-24h' })
    expect(wallString(r.lower)).toBe('2024-01-09 10:00:00')
    expect(bucketsOf(r).map(dateString)).toEqual(['2024-01-09', '2024-01-10'])
  })

  it('an absolute date with an offset is read as that instant', () => {
    expect(wallString(range({ date_from: '2024-01-05T03:00:00Z' }).from)).toBe('2024-01-04 22:00:00')
  })

  it('the previous period of -7d is the 8 days before, shifted one day later', () => {
    const p = previousPeriod(range({ date_from: '-7d' }))
    expect(wallString(p.from)).toBe('2023-12-27 00:00:00')
    expect(wallString(p.to)).toBe('2024-01-03 23:59:59')
  })

  it('weeks start on Sunday and their labels are cut to the range', () => {
    const r = range({ date_from: '2024-01-01', date_to: '2024-01-10' }, 'week')
    const b = bucketsOf(r)
    expect(b.map(dateString)).toEqual(['2023-12-31', '2024-01-07'])
    expect(b.map((w) => labelOf(w, r))).toEqual(['1–6 Jan', '7–10 Jan'])
    const across = range({ date_from: '2023-12-28', date_to: '2024-01-02' }, 'week')
    expect(bucketsOf(across).map((w) => labelOf(w, across))).toEqual([
      '28–30 Dec',
      '31-Dec-2023 – 2-Jan-2024',
    ])
  })

  it('a DST change day is one bucket; months are labelled "Mon YYYY"', () => {
    const r = range({ date_from: '-3d' }, 'day', Date.parse('2024-03-12T12:00:00Z'))
    expect(bucketsOf(r).map(dateString)).toEqual(['2024-03-09', '2024-03-10', '2024-03-11', '2024-03-12'])
    const m = range({ date_from: '2023-11-15', date_to: '2024-01-10' }, 'month')
    expect(bucketsOf(m).map((w) => labelOf(w, m))).toEqual(['Nov 2023', 'Dec 2023', 'Jan 2024'])
  })
})

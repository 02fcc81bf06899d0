// A dashboard's filters over its insights' queries, as PostHog's runners apply them
// (apply_dashboard_filters: insight kinds, EventsQuery, HogQLQuery, wrappers), and PostHog's
// ?refresh= values.
import { describe, expect, it } from 'vitest'
import { applyDashboardFilters, dashboardFilter } from '../../../src/dashboards/filters.ts'
import { refreshMode, runnableQuery } from '../../../src/dashboards/results.ts'

const prop = (key: string, value: string) => ({ key, value, type: 'event' })

describe('applyDashboardFilters', () => {
  const trends = {
    kind: 'TrendsQuery',
    series: [{ kind: 'EventsNode', event: '$pageview' }],
    dateRange: { date_from: '-7d', date_to: '-1d', explicitDate: true },
    properties: [prop('$browser', 'Chrome')],
  }

  it('replaces both ends of an insight kind date range when either is set', () => {
    const out = applyDashboardFilters(trends, { date_from: '-30d' }) as typeof trends
    expect(out.dateRange).toEqual({ date_from: '-30d', date_to: null, explicitDate: true })
    expect(trends.dateRange.date_from).toBe('-7d')
  })

  it("ANDs the dashboard's property filters with the insight's own", () => {
    const out = applyDashboardFilters(trends, { properties: [prop('$os', 'Mac')] }) as Record<string, unknown>
    expect(out.properties).toEqual({
      type: 'AND',
      values: [
        { type: 'AND', values: [prop('$browser', 'Chrome')] },
        { type: 'AND', values: [prop('$os', 'Mac')] },
      ],
    })
    const bare = applyDashboardFilters(
      { kind: 'FunnelsQuery', series: [] },
      { properties: [prop('$os', 'Mac')] },
    )
    expect((bare as Record<string, unknown>).properties).toEqual([prop('$os', 'Mac')])
  })

  it('passes through the wrapper nodes to their source', () => {
    const wrapped = { kind: 'InsightVizNode', source: trends, full: true }
    const out = applyDashboardFilters(wrapped, { date_from: 'all' }) as {
      source: typeof trends
      full: boolean
    }
    expect(out.full).toBe(true)
    expect(out.source.dateRange.date_from).toBe('all')
  })

  it('turns compare off for all time', () => {
    const out = applyDashboardFilters({ ...trends, compareFilter: { compare: true } }, { date_from: 'all' })
    expect((out as Record<string, unknown>).compareFilter).toEqual({ compare: false })
  })

  it('EventsQuery: after/before and more properties; HogQLQuery: its filters', () => {
    const ev = applyDashboardFilters(
      { kind: 'EventsQuery', select: ['*'], properties: [prop('a', '1')] },
      { date_from: '-1d', properties: [prop('b', '2')] },
    )
    expect(ev).toMatchObject({ after: '-1d', before: null, properties: [prop('a', '1'), prop('b', '2')] })
    const hogql = applyDashboardFilters(
      { kind: 'HogQLQuery', query: 'SELECT 1 FROM events WHERE {filters}' },
      { date_to: '2024-01-01', properties: [prop('b', '2')] },
    )
    expect(hogql).toMatchObject({
      filters: { dateRange: { date_from: null, date_to: '2024-01-01' }, properties: [prop('b', '2')] },
    })
  })

  it('no filters, or other kinds: the query as it was', () => {
    expect(applyDashboardFilters(trends, {})).toBe(trends)
    const actors = { kind: 'ActorsQuery', select: ['person'] }
    expect(applyDashboardFilters(actors, { date_from: '-1d' })).toBe(actors)
    expect(dashboardFilter({ date_from: '', properties: [], other: 1 })).toEqual({})
  })
})

describe("PostHog's ?refresh=", () => {
  it.each([
    [undefined, 'force_cache'],
    ['', 'force_blocking'],
    ['true', 'force_blocking'],
    ['1', 'force_blocking'],
    ['false', 'force_cache'],
    ['blocking', 'blocking'],
    ['lazy_async', 'lazy_async'],
    ['force_async', 'force_async'],
    ['nonsense', 'force_cache'],
  ])('%j is %s', (raw, mode) => expect(refreshMode(raw)).toBe(mode))

  it('runs the source of a wrapper node, or the query itself', () => {
    expect(
      runnableQuery({ kind: 'DataVisualizationNode', source: { kind: 'HogQLQuery', query: 'x' } }),
    ).toEqual({
      kind: 'HogQLQuery',
      query: 'x',
    })
    expect(runnableQuery({ kind: 'TrendsQuery' })).toEqual({ kind: 'TrendsQuery' })
    expect(runnableQuery({ kind: 'InsightVizNode' })).toBeUndefined()
    expect(runnableQuery(null)).toBeUndefined()
  })
})

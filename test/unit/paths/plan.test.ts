// The pure rules of PathsQuery: edge validation (PostHog's TestClickhousePathsEdgeValidation),
// which event types keep their naming rule (test_properties_queried_using_path_filter), wildcard
// groupings, target points, cleaning rules and the 400s.
import { describe, expect, it } from 'vitest'
import {
  cleaningRules,
  DEFAULT_EDGE_LIMIT,
  DEFAULT_STEP_LIMIT,
  groupingRegex,
  namedByType,
  normalizePoint,
  planPaths,
} from '../../../src/paths/plan.ts'
import { reachableEdges } from '../../../src/paths/results.ts'
import { PathsFilter, PathsQuery } from '../../../src/paths/schema.ts'

const pairs = (xs: [string, string][]) => xs.map(([source, target]) => ({ source, target }))

describe('reachableEdges (PostHog validate_results)', () => {
  const BASIC: [string, string][] = [
    ['1_a', '2_b'],
    ['2_b', '3_c'],
    ['3_c', '4_d'],
  ]
  const BASIC_2: [string, string][] = [
    ['1_x', '2_y'],
    ['2_y', '3_z'],
  ]
  const sorted = (xs: { source: string; target: string }[]) => xs.map((e) => `${e.source}>${e.target}`).sort()

  it('keeps a forest whole', () => {
    const edges = pairs([...BASIC, ...BASIC_2])
    expect(sorted(reachableEdges(edges))).toEqual(sorted(edges))
  })

  it('drops dangling edges', () => {
    const edges = pairs([...BASIC, ...BASIC_2, ['2_w', '3_z'], ['3_x', '4_d'], ['2_xxx', '3_yyy']])
    expect(sorted(reachableEdges(edges))).toEqual(sorted(pairs([...BASIC, ...BASIC_2])))
  })

  it('keeps cross edges between reachable nodes', () => {
    const edges = pairs([...BASIC, ...BASIC_2, ['2_w', '3_z'], ['3_x', '4_d'], ['2_y', '3_c']])
    expect(sorted(reachableEdges(edges))).toEqual(sorted(pairs([...BASIC, ...BASIC_2, ['2_y', '3_c']])))
  })

  it('drops what only a removed start reached', () => {
    const edges = pairs([...BASIC.slice(1), ...BASIC_2, ['2_w', '3_z'], ['3_x', '4_d']])
    expect(sorted(reachableEdges(edges))).toEqual(sorted(pairs(BASIC_2)))
  })

  it('keeps the order it is given', () => {
    const edges = pairs([
      ['2_b', '3_c'],
      ['1_a', '2_b'],
    ])
    expect(reachableEdges(edges)).toEqual(edges)
  })
})

describe('namedByType (PostHog _should_query_event)', () => {
  const cases: [string, object, [boolean, boolean]][] = [
    ['empty filter', {}, [true, true]],
    ['include pageview', { includeEventTypes: ['$pageview'] }, [true, false]],
    ['include screen', { includeEventTypes: ['$screen'] }, [false, true]],
    ['include all', { includeEventTypes: ['$pageview', '$screen', 'custom_event'] }, [true, true]],
    [
      'exclude custom1',
      { includeEventTypes: ['$pageview', '$screen', 'custom_event'], excludeEvents: ['/custom1'] },
      [true, true],
    ],
    ['exclude pageview', { excludeEvents: ['$pageview'] }, [false, true]],
  ]
  for (const [name, raw, expected] of cases) {
    it(name, () => {
      const f = PathsFilter.parse(raw)
      expect([namedByType(f, '$pageview'), namedByType(f, '$screen')]).toEqual(expected)
    })
  }
})

describe('groupingRegex', () => {
  const matches = (grouping: string, item: string) => new RegExp(groupingRegex(grouping)).test(item)

  it('a star matches any run, anywhere in the item (test_wildcard_groups_across_people)', () => {
    expect(matches('/bar/*/foo', '/bar/2/foo')).toBe(true)
    expect(matches('/bar/*/foo', '/bar/33/foo')).toBe(true)
    expect(matches('/bar/*/foo', '/2/bar/1/foo')).toBe(true)
    expect(matches('/bar/*/foo', '/bar/2/baz')).toBe(false)
  })

  it('every other character is literal (test_wildcard_groups_evil_input)', () => {
    const evil = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!'
    expect(matches('(a+)+', evil)).toBe(false)
    expect(matches('[aaa|aaaa]+', evil)).toBe(false)
    expect(matches('1.*', '/1')).toBe(false)
    expect(matches('.*', '/2/bar/aaa')).toBe(false)
    expect(matches('/3?q=1', '/3?q=1')).toBe(true)
    expect(matches('/3?q=1', '/3')).toBe(false)
    expect(matches('/3*', '/3')).toBe(true)
    expect(groupingRegex('a.b*c\\d')).toBe('a\\.b.*c\\\\d')
  })
})

describe('normalizePoint', () => {
  it('drops one trailing slash, but keeps the root', () => {
    expect(normalizePoint('/pricing/')).toBe('/pricing')
    expect(normalizePoint('/pricing')).toBe('/pricing')
    expect(normalizePoint('/')).toBe('/')
    expect(normalizePoint('')).toBeNull()
    expect(normalizePoint(null)).toBeNull()
  })
})

describe('cleaningRules', () => {
  const project = [{ regex: '/merchant/\\d+', alias: '/merchant/:id' }]
  const local = [
    { regex: '\\?.*', alias: '' },
    { regex: null, alias: 'skipped' },
  ]
  it("applies the project's rules only with pathReplacements, before the query's own", () => {
    expect(cleaningRules({ localPathCleaningFilters: local }, project)).toEqual([
      { regex: '\\?.*', alias: '' },
    ])
    expect(cleaningRules({ pathReplacements: true, localPathCleaningFilters: local }, project)).toEqual([
      { regex: '/merchant/\\d+', alias: '/merchant/:id' },
      { regex: '\\?.*', alias: '' },
    ])
  })
})

describe('planPaths', () => {
  const plan = (pathsFilter: object, extra: object = {}) =>
    planPaths(PathsQuery.parse({ kind: 'PathsQuery', pathsFilter, ...extra }))

  it("PostHog's defaults", () => {
    const p = plan({})
    expect([p.stepLimit, p.edgeLimit, p.minEdgeWeight, p.maxEdgeWeight]).toEqual([
      DEFAULT_STEP_LIMIT,
      DEFAULT_EDGE_LIMIT,
      null,
      null,
    ])
    expect([DEFAULT_STEP_LIMIT, DEFAULT_EDGE_LIMIT]).toEqual([5, 50])
    expect(p.eventTypes).toBeUndefined()
  })

  it('excludeEvents only filter together with includeEventTypes', () => {
    expect(plan({ excludeEvents: ['/a'] }).excludeEvents).toEqual([])
    expect(plan({ includeEventTypes: ['$pageview'], excludeEvents: ['/a'] }).excludeEvents).toEqual(['/a'])
  })

  it('refuses hogql without an expression, group paths, and unknown event types', () => {
    expect(() => plan({ includeEventTypes: ['hogql'] })).toThrow(/pathsHogQLExpression/)
    expect(() => plan({}, { aggregation_group_type_index: 0 })).toThrow(/groups/)
    expect(
      PathsQuery.safeParse({ kind: 'PathsQuery', pathsFilter: { includeEventTypes: ['x'] } }).success,
    ).toBe(false)
    expect(PathsQuery.safeParse({ kind: 'PathsQuery', pathsFilter: { stepLimit: 0 } }).success).toBe(false)
  })
})

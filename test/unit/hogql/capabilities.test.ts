// What Burrow relies on per ClickHouse release (src/hogql/capabilities.ts).
import { describe, expect, it } from 'vitest'
import {
  atLeast,
  capabilitiesOf,
  guardSettings,
  parseVersion,
  PORTABLE,
} from '../../../src/hogql/capabilities.ts'

describe('capabilities', () => {
  it('reads versions as numbers', () => {
    expect(parseVersion('26.7.2.1')).toEqual([26, 7, 2, 1])
    expect(parseVersion('18.16.1')).toEqual([18, 16, 1])
    expect(parseVersion('nonsense')).toEqual([0])
    expect(atLeast([21, 9], '21.9')).toBe(true)
    expect(atLeast([21, 8, 15], '21.9')).toBe(false)
    expect(atLeast([21, 10], '21.9')).toBe(true)
    expect(atLeast([22], '21.9')).toBe(true)
  })

  it('gives 18.16 the portable baseline and 26.x the richer constructs', () => {
    expect(capabilitiesOf('18.16.1')).toEqual({
      ...PORTABLE,
      version: '18.16.1',
      joinedSubqueryNeedsAlias: false,
      guardBarrier: 'with',
    })
    expect(capabilitiesOf('26.7.2.1')).toEqual({
      version: '26.7.2.1',
      windowFunctions: true,
      accurateCastOrNull: true,
      joinedSubqueryNeedsAlias: true,
      intersectExcept: true,
      limitWithTies: true,
      joinConditions: true,
      limitExpressions: true,
      guardBarrier: 'limit',
    })
    expect(capabilitiesOf('21.3.1').windowFunctions).toBe(false)
    expect(capabilitiesOf('21.7.1').intersectExcept).toBe(false)
    expect(capabilitiesOf('19.17.1').limitWithTies).toBe(false)
    expect(capabilitiesOf('25.8.1').joinConditions).toBe(false)
    expect(capabilitiesOf('25.8.1').limitExpressions).toBe(false)
    // the WITH barrier is proven on 18.16 only; every other server keeps the LIMIT
    expect(capabilitiesOf('18.14.1').guardBarrier).toBe('limit')
    expect(capabilitiesOf('19.17.1').guardBarrier).toBe('limit')
    expect(PORTABLE.guardBarrier).toBe('limit')
  })

  it('sends only the guard settings the server knows', () => {
    expect(guardSettings({ version: '18.16.1', settings: ['enable_optimize_predicate_expression'] })).toEqual(
      {
        enable_optimize_predicate_expression: '0',
      },
    )
    expect(
      guardSettings({
        version: '26.7.2.1',
        settings: ['enable_optimize_predicate_expression', 'optimize_prewhere_after_pushdown'],
      }),
    ).toEqual({ enable_optimize_predicate_expression: '0', optimize_prewhere_after_pushdown: '0' })
  })
})

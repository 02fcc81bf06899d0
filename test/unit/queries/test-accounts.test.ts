import { describe, expect, it } from 'vitest'
import { asksForTestAccounts, withTestAccounts } from '../../../src/queries/test-accounts.ts'

const EMAIL = { key: 'email', value: '@posthog.com', operator: 'not_icontains', type: 'person' }
const project = { settings: { test_account_filters: [EMAIL] } }

describe('withTestAccounts', () => {
  it("folds the project's filters into a list of properties, once", () => {
    const own = { key: '$browser', value: 'Chrome', type: 'event' }
    const q = { kind: 'TrendsQuery', properties: [own], filterTestAccounts: true }
    const folded = withTestAccounts(q, project)
    expect(folded).toEqual({ kind: 'TrendsQuery', properties: [own, EMAIL], filterTestAccounts: false })
    expect(withTestAccounts(folded, project)).toBe(folded)
  })

  it('ANDs them to a property group, and stands in for missing properties', () => {
    const group = { type: 'OR', values: [{ key: 'a', value: 1 }] }
    expect(withTestAccounts({ properties: group, filterTestAccounts: true }, project).properties).toEqual({
      type: 'AND',
      values: [group, { type: 'AND', values: [EMAIL] }],
    })
    expect(withTestAccounts({ properties: null, filterTestAccounts: true }, project).properties).toEqual([
      EMAIL,
    ])
  })

  it('changes nothing without the flag or without filters', () => {
    const off = { properties: [], filterTestAccounts: false }
    expect(withTestAccounts(off, project)).toBe(off)
    const on = { filterTestAccounts: true }
    expect(withTestAccounts(on, { settings: { test_account_filters: [] } })).toBe(on)
  })

  it('refuses stored filters that are not property filters', () => {
    const bad = { settings: { test_account_filters: [{ type: 'person' }] } }
    expect(() => withTestAccounts({ filterTestAccounts: true }, bad)).toThrow(/test_account_filters/)
  })
})

describe('asksForTestAccounts', () => {
  it('finds the flag at any depth of the query', () => {
    expect(asksForTestAccounts({ kind: 'TrendsQuery', filterTestAccounts: true })).toBe(true)
    expect(asksForTestAccounts({ kind: 'HogQLQuery', filters: { filterTestAccounts: true } })).toBe(true)
    const actors = {
      kind: 'ActorsQuery',
      source: { source: { kind: 'FunnelsQuery', filterTestAccounts: true } },
    }
    expect(asksForTestAccounts(actors)).toBe(true)
    expect(asksForTestAccounts({ kind: 'TrendsQuery', filterTestAccounts: false })).toBe(false)
    expect(asksForTestAccounts({ kind: 'TrendsQuery' })).toBe(false)
  })
})

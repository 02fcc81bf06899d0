// What a batch adds to the taxonomy, with PostHog's cases (plugin-server
// property-definitions-manager.test.ts: inputs and the definitions PostHog stores for them) and the
// promise that known names cost no write.
import { describe, expect, it } from 'vitest'
import { TaxonomyCollector, UNTYPED_AT } from '../../../src/taxonomy/collect.ts'

const T = 7
const AT = Date.UTC(2020, 1, 27, 11, 0, 36)
const HOUR = 3_600_000

const sorted = <R extends { name?: string; property?: string }>(rows: R[]) =>
  [...rows].sort((a, b) => (String(a.name ?? a.property) < String(b.name ?? b.property) ? -1 : 1))

describe('TaxonomyCollector', () => {
  it('records an event, its properties and their pairs (PostHog: updates event properties)', () => {
    const batch = new TaxonomyCollector().begin()
    batch.see(T, 'new-event', { property_name: 'efg', number: 4, numeric_prop: 5 }, AT)
    const rows = batch.rows()
    expect(rows.events).toEqual([{ team_id: T, name: 'new-event', created_at: AT, last_seen_at: AT }])
    expect(sorted(rows.eventProperties).map((r) => r.property)).toEqual([
      'number',
      'numeric_prop',
      'property_name',
    ])
    expect(sorted(rows.properties).map((r) => [r.name, r.type, r.group_type_index, r.typed[1]])).toEqual([
      ['number', 1, -1, 'Numeric'],
      ['numeric_prop', 1, -1, 'Numeric'],
      ['property_name', 1, -1, 'String'],
    ])
  })

  it('person properties from $set and $set_once, not as event properties', () => {
    const batch = new TaxonomyCollector().begin()
    batch.see(T, 'new-event', { $set: { foo: 'bar' }, $set_once: { numeric: 123 } }, AT)
    const rows = batch.rows()
    expect(sorted(rows.properties).map((r) => [r.name, r.type, r.typed[1]])).toEqual([
      ['foo', 2, 'String'],
      ['numeric', 2, 'Numeric'],
    ])
    expect(rows.eventProperties).toEqual([])
  })

  it('a $groupidentify adds its $group_set as properties of its group type only', () => {
    const batch = new TaxonomyCollector().begin()
    const props = {
      $group_type: 'organization',
      $group_key: 'org::5',
      $group_set: { foo: 'bar', numeric: 3 },
    }
    batch.see(T, '$groupidentify', props, AT, 1)
    const rows = batch.rows()
    expect(sorted(rows.properties).map((r) => [r.name, r.type, r.group_type_index, r.typed[1]])).toEqual([
      ['foo', 3, 1, 'String'],
      ['numeric', 3, 1, 'Numeric'],
    ])
    expect(rows.eventProperties).toEqual([])
    expect(rows.events.map((e) => e.name)).toEqual(['$groupidentify'])
  })

  it('regressions: an empty $group_set or no group type adds no property', () => {
    const batch = new TaxonomyCollector().begin()
    batch.see(
      T,
      '$groupidentify',
      { $group_type: 'organization', $group_key: 'org::5', $group_set: null },
      AT,
      1,
    )
    batch.see(T, '$groupidentify', { $group_key: 'org::5', $group_set: { foo: 'bar' } }, AT, null)
    expect(batch.rows().properties).toEqual([])
  })

  it('400 characters fit in a name; 401 are left out (event and property alike)', () => {
    const batch = new TaxonomyCollector().begin()
    const fits = '😀'.repeat(400)
    const long = '😀'.repeat(401)
    batch.see(T, fits, { [fits]: 'foo' }, AT)
    batch.see(T, long, { [long]: 'foo' }, AT)
    const rows = batch.rows()
    expect(rows.events.map((e) => e.name)).toEqual([fits])
    expect(rows.properties.map((p) => [p.name, p.typed[1]])).toEqual([[fits, 'String']])
  })

  it('skips $set, $set_once, $unset, $groups and $group_N as event properties, and $$plugin_metrics', () => {
    const batch = new TaxonomyCollector().begin()
    batch.see(
      T,
      'e',
      { $set: {}, $set_once: {}, $unset: ['a'], $groups: { org: 'x' }, $group_0: 'x', keep: 1 },
      AT,
    )
    batch.see(T, '$$plugin_metrics', { metric: 1 }, AT)
    const rows = batch.rows()
    expect(rows.properties.map((p) => p.name)).toEqual(['keep'])
    expect(rows.events.map((e) => e.name)).toEqual(['e'])
  })

  it('$feature/ keys get a definition but no (event, property) pair', () => {
    const batch = new TaxonomyCollector().begin()
    batch.see(
      T,
      '$pageview',
      { '$feature/beta': true, '$feature_enrollment/x': true, $browser: 'Chrome' },
      AT,
    )
    const rows = batch.rows()
    expect(sorted(rows.properties).map((p) => [p.name, p.typed[1]])).toEqual([
      ['$browser', 'String'],
      ['$feature/beta', 'String'],
      ['$feature_enrollment/x', 'Boolean'],
    ])
    expect(rows.eventProperties.map((p) => p.property)).toEqual(['$browser'])
  })

  it('writes nothing for names already written, and an event once an hour for last_seen_at', () => {
    const c = new TaxonomyCollector()
    const first = c.begin()
    first.see(T, '$pageview', { $browser: 'Chrome', n: 1 }, AT)
    expect(first.empty).toBe(false)
    first.written()

    const same = c.begin()
    for (let i = 0; i < 100; i++) same.see(T, '$pageview', { $browser: 'Firefox', n: i }, AT + i * 1000)
    expect(same.empty).toBe(true)

    const later = c.begin()
    later.see(T, '$pageview', { $browser: 'Chrome', n: 2 }, AT + HOUR)
    expect(later.rows()).toEqual({
      events: [{ team_id: T, name: '$pageview', created_at: AT + HOUR, last_seen_at: AT + HOUR }],
      properties: [],
      eventProperties: [],
    })
  })

  it('a batch whose write failed leaves its names unknown: the next batch writes them again', () => {
    const c = new TaxonomyCollector()
    const failed = c.begin()
    failed.see(T, 'signed up', { plan: 'pro' }, AT)
    // (no written(): the INSERT failed and the batch is retried)
    const retry = c.begin()
    retry.see(T, 'signed up', { plan: 'pro' }, AT)
    expect(retry.rows()).toEqual(failed.rows())
  })

  it('one row per new name in a batch, with the earliest and latest times', () => {
    const batch = new TaxonomyCollector().begin()
    batch.see(T, 'e', { p: 'a' }, AT + 5)
    batch.see(T, 'e', { p: 'b' }, AT)
    batch.see(T, 'e', { p: 'c' }, AT + 9)
    const rows = batch.rows()
    expect(rows.events).toEqual([{ team_id: T, name: 'e', created_at: AT, last_seen_at: AT + 9 }])
    expect(rows.properties).toHaveLength(1)
    expect(rows.eventProperties).toHaveLength(1)
  })

  it('an untyped property (PostHog: adds no type for objects) gets its type from a later value', () => {
    const c = new TaxonomyCollector()
    const first = c.begin()
    first.see(T, 'e', { anObjectProperty: { anything: 1 } }, AT)
    expect(first.rows().properties).toEqual([
      {
        team_id: T,
        type: 1,
        group_type_index: -1,
        name: 'anObjectProperty',
        created_at: AT,
        typed: [UNTYPED_AT, ''],
      },
    ])
    first.written()
    // still an object: nothing to write (PostHog: does not keep trying to set a type it cannot)
    const again = c.begin()
    again.see(T, 'e', { anObjectProperty: { anything: 2 } }, AT + 1)
    expect(again.empty).toBe(true)
    // a number: the definition is typed now
    const typed = c.begin()
    typed.see(T, 'e', { anObjectProperty: 5 }, AT + 2)
    expect(typed.rows().properties).toEqual([
      {
        team_id: T,
        type: 1,
        group_type_index: -1,
        name: 'anObjectProperty',
        created_at: AT + 2,
        typed: [AT + 2, 'Numeric'],
      },
    ])
  })

  it('keeps projects apart: the same names in another project are new there', () => {
    const c = new TaxonomyCollector()
    const a = c.begin()
    a.see(1, '$pageview', { $browser: 'Chrome' }, AT)
    a.written()
    const b = c.begin()
    b.see(2, '$pageview', { $browser: 'Chrome' }, AT)
    const rows = b.rows()
    expect(rows.events.map((e) => e.team_id)).toEqual([2])
    expect(rows.properties.map((p) => p.team_id)).toEqual([2])
    expect(rows.eventProperties.map((p) => p.team_id)).toEqual([2])
  })

  it('stores NUL as U+FFFD, as PostHog does', () => {
    const batch = new TaxonomyCollector().begin()
    batch.see(T, 'a\u0000b', { 'k\u0000': 1 }, AT)
    const rows = batch.rows()
    expect(rows.events[0]!.name).toBe('a\uFFFDb')
    expect(rows.properties[0]!.name).toBe('k\uFFFD')
  })
})

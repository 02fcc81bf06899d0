import { describe, expect, it } from 'vitest'
import { mergePersonUpdates } from '../../../../src/projectors/steps/merge-person-updates.ts'
import { captured } from './helpers.ts'

// Cases from PostHog's nodejs/src/utils/event.test.ts ("combines .properties $set and $set_once with
// top-level $set and $set_once") and the SDK payloads of posthog-js identify / capture.

describe('mergePersonUpdates', () => {
  it('combines properties.$set/$set_once with top-level ones; the top level wins a shared key', () => {
    const e = captured({
      event: 'some_event',
      $set: { key1: 'value1', key2: 'value2' },
      $set_once: { key1_once: 'value1', key2_once: 'value2' },
      properties: {
        distinct_id: 'distinct_id1',
        $set: { key2: 'value3', key3: 'value4' },
        $set_once: { key2_once: 'value3', key3_once: 'value4' },
      },
    })
    const r = mergePersonUpdates(e)
    expect(r.type).toBe('ok')
    if (r.type !== 'ok') return
    expect(r.value.properties.$set).toEqual({ key1: 'value1', key2: 'value2', key3: 'value4' })
    expect(r.value.properties.$set_once).toEqual({
      key1_once: 'value1',
      key2_once: 'value2',
      key3_once: 'value4',
    })
    expect(r.value.properties.distinct_id).toBe('distinct_id1')
    expect('$set' in r.value).toBe(false)
    expect('$set_once' in r.value).toBe(false)
  })

  it('moves posthog-js identify(id, {email}) person properties into properties.$set', () => {
    const e = captured({
      event: '$identify',
      $set: { email: 'a@x.io' },
      properties: { $anon_distinct_id: 'anon' },
    })
    const r = mergePersonUpdates(e)
    expect(r).toMatchObject({
      type: 'ok',
      value: { properties: { $anon_distinct_id: 'anon', $set: { email: 'a@x.io' } } },
    })
  })

  it('leaves an event without top-level updates as it is (the same object)', () => {
    const e = captured({ properties: { $set: { a: 1 } } })
    const r = mergePersonUpdates(e)
    expect(r.type === 'ok' && r.value).toBe(e)
  })

  it('does not change the captured event it was given', () => {
    const e = captured({ $set: { a: 1 }, properties: { $set: { b: 2 } } })
    mergePersonUpdates(e)
    expect(e.properties).toEqual({ $set: { b: 2 } })
    expect(e.$set).toEqual({ a: 1 })
  })
})

import { describe, expect, it } from 'vitest'
import { normalizeEvent } from '../../../src/capture/normalize.ts'
import { withTopLevelUpdates } from '../../../src/jetstream/messages.ts'

// posthog-js sends identify(id, {email}) and capture(name, props, {$set}) with $set / $set_once at the
// top level of the event; capture carries them into the log as sent (version 2 of the log format).

const ctx = { teamId: 3, nowMs: Date.parse('2026-06-01T12:00:00.000Z'), ip: null, sentAt: undefined }

describe('top-level person updates through capture', () => {
  it('keeps posthog-js identify top-level $set / $set_once on the event', () => {
    // the shape posthog-js 1.x sends for posthog.identify('user-1', {email}, {first_seen})
    const r = normalizeEvent(
      {
        event: '$identify',
        properties: { distinct_id: 'user-1', $anon_distinct_id: 'anon-1', $lib: 'web' },
        $set: { email: 'a@x.io' },
        $set_once: { first_seen: '2026-05-01' },
      },
      ctx,
    )
    expect('ok' in r).toBe(true)
    if (!('ok' in r)) return
    expect(r.ok.$set).toEqual({ email: 'a@x.io' })
    expect(r.ok.$set_once).toEqual({ first_seen: '2026-05-01' })
    expect(r.ok.properties.$set).toBeUndefined()
  })

  it('ignores top-level values that are not objects, and a top-level $unset', () => {
    const r = normalizeEvent(
      { event: 'x', distinct_id: 'u', $set: 'email', $set_once: null, $unset: ['plan'] },
      ctx,
    )
    expect('ok' in r && r.ok).toMatchObject({ event: 'x', properties: {} })
    if (!('ok' in r)) return
    expect('$set' in r.ok || '$set_once' in r.ok || '$unset' in r.ok).toBe(false)
  })

  it('turns a legacy /engage/ body into an $identify whose properties carry the updates', () => {
    const r = normalizeEvent(
      { $distinct_id: 'd7', $set: { marker: 'x' }, properties: { $set: { marker: 'old', keep: 1 } } },
      ctx,
    )
    expect('ok' in r && r.ok).toMatchObject({
      event: '$identify',
      properties: { $set: { marker: 'x', keep: 1 } },
    })
    if ('ok' in r) expect(r.ok.$set).toBeUndefined()
  })
})

describe('withTopLevelUpdates', () => {
  it("follows PostHog's precedence: the top-level value wins a key present in both", () => {
    // nodejs/src/utils/event.test.ts: "combines .properties $set and $set_once with top-level ..."
    const props = {
      $set: { key2: 'value3', key3: 'value4' },
      $set_once: { key2_once: 'value3', key3_once: 'value4' },
    }
    const out = withTopLevelUpdates(
      props,
      { key1: 'value1', key2: 'value2' },
      { key1_once: 'value1', key2_once: 'value2' },
    )
    expect(out.$set).toEqual({ key1: 'value1', key2: 'value2', key3: 'value4' })
    expect(out.$set_once).toEqual({ key1_once: 'value1', key2_once: 'value2', key3_once: 'value4' })
    expect(props.$set).toEqual({ key2: 'value3', key3: 'value4' })
  })

  it('returns the properties themselves when there is nothing to merge', () => {
    const props = { a: 1 }
    expect(withTopLevelUpdates(props, undefined, 'x')).toBe(props)
  })
})

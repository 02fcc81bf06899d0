import { describe, expect, it } from 'vitest'
import { applyEvent, MemoryIdentityStore } from '../../../../src/projectors/identity/index.ts'
import { pid, Runner, T0 } from './helpers.ts'

describe('person creation', () => {
  it('creates a person with a deterministic id on the first event of an unknown distinct id', async () => {
    const run = new Runner()
    const result = await run.stamp('$pageview', 'u1', { $set: { a: 1 }, $set_once: { b: 2, a: 9 } }, T0)
    const creator = run.lastUuid()
    const expected = {
      id: pid('u1'),
      createdAtMs: T0,
      properties: { b: 2, a: 1, $creator_event_uuid: creator },
      isIdentified: false,
      version: 0,
      distinctIds: ['u1'],
      overriddenIds: [],
    }
    expect(result.personId).toBe(pid('u1'))
    expect(result.personMode).toBe('full')
    expect(result.personCreatedAtMs).toBe(T0)
    expect(result.personProperties).toEqual({ b: 2, a: 1, $creator_event_uuid: creator })
    expect(result.changes.persons).toEqual([expected])
    expect(result.changes.distinctIds).toEqual([
      { distinctId: 'u1', personId: pid('u1'), version: 0, isDeleted: false },
    ])
    expect(result.changes.overrides).toEqual([])
    expect(await run.person('u1')).toEqual(expected)
  })

  it('ignores $unset when the person is created by the event', async () => {
    const run = new Runner()
    await run.stamp('e', 'u1', { $set: { q: 1 }, $unset: ['q'] })
    expect((await run.person('u1'))?.properties).toEqual({ q: 1, $creator_event_uuid: run.lastUuid() })
  })

  it('keeps later events on the same person', async () => {
    const run = new Runner()
    await run.stamp('e', 'u1')
    const second = await run.stamp('e', 'u1')
    expect(second.personId).toBe(pid('u1'))
    expect(second.changes.persons).toEqual([])
    expect(second.changes.distinctIds).toEqual([])
  })

  it('separates teams', async () => {
    const run1 = new Runner(1)
    const result = await run1.stamp('e', 'same')
    const run2 = await applyEvent(run1.store, 2, {
      uuid: 'x',
      event: 'e',
      distinct_id: 'same',
      properties: {},
      timestamp_ms: T0,
    })
    expect(result.personId).toBe(pid('same', 1))
    expect(run2.dropped).toBe(false)
    if (!run2.dropped) expect(run2.personId).toBe(pid('same', 2))
  })
})

describe('$set, $set_once and $unset', () => {
  async function withPerson() {
    const run = new Runner()
    await run.stamp('e', 'u1', { $set: { a: 1, b: 2 } })
    const creator = run.lastUuid()
    return { run, creator }
  }

  it('$set_once fills only missing keys', async () => {
    const { run, creator } = await withPerson()
    const result = await run.stamp('e', 'u1', { $set_once: { a: 5, c: 3 } })
    expect(result.changes.persons[0]?.properties).toEqual({ a: 1, b: 2, c: 3, $creator_event_uuid: creator })
    expect(result.changes.persons[0]?.version).toBe(1)
  })

  it('$set overwrites', async () => {
    const { run } = await withPerson()
    await run.stamp('e', 'u1', { $set: { a: 'x' } })
    expect((await run.person('u1'))?.properties.a).toBe('x')
    expect((await run.person('u1'))?.version).toBe(1)
  })

  it('writes nothing and keeps the version when nothing changes', async () => {
    const { run } = await withPerson()
    const result = await run.stamp('e', 'u1', { $set: { a: 1 }, $set_once: { b: 'other' }, $unset: ['zzz'] })
    expect(result.changes.persons).toEqual([])
    expect((await run.person('u1'))?.version).toBe(0)
  })

  it('$unset removes keys given as an array or as object keys', async () => {
    const { run, creator } = await withPerson()
    await run.stamp('e', 'u1', { $unset: ['a'] })
    await run.stamp('e', 'u1', { $unset: { b: null } })
    const person = await run.person('u1')
    expect(person?.properties).toEqual({ $creator_event_uuid: creator })
    expect(person?.version).toBe(2)
  })

  it('keeps keys named like Object.prototype members as plain keys, as PostHog does', async () => {
    const { run, creator } = await withPerson()
    // as the decoder reads an event: JSON.parse makes "__proto__" an own key
    await run.stamp('e', 'u1', JSON.parse('{"$set_once": {"__proto__": {"x": 1}, "toString": "t"}}'))
    const expected = `{"a":1,"b":2,"$creator_event_uuid":"${creator}","__proto__":{"x":1},"toString":"t"}`
    expect(JSON.stringify((await run.person('u1'))?.properties)).toBe(expected)
    await run.stamp('e', 'u1', JSON.parse('{"$set": {"__proto__": {"y": 2}}}'))
    const person = await run.person('u1')
    expect(JSON.stringify(person?.properties)).toBe(expected.replace('{"x":1}', '{"y":2}'))
    expect(person?.version).toBe(2)
    // names every object inherits but the person does not have: nothing to unset
    const none = await run.stamp('e', 'u1', { $unset: ['constructor', 'hasOwnProperty'] })
    expect(none.changes.persons).toEqual([])
  })

  it('within one event $set beats $set_once', async () => {
    const { run } = await withPerson()
    await run.stamp('e', 'u1', { $set: { x: 1 }, $set_once: { x: 2 } })
    expect((await run.person('u1'))?.properties.x).toBe(1)
  })

  it('within one event $unset runs last but only on keys the person had before', async () => {
    const { run } = await withPerson()
    await run.stamp('e', 'u1', { $set: { a: 'new', z: 1 }, $unset: ['a', 'z'] })
    const properties = (await run.person('u1'))?.properties
    expect(properties).not.toHaveProperty('a')
    expect(properties?.z).toBe(1)
  })

  it('applies events in log order, not by timestamp', async () => {
    const { run } = await withPerson()
    await run.stamp('e', 'u1', { $set: { plan: 'pro' } }, T0 + 60_000)
    await run.stamp('e', 'u1', { $set: { plan: 'free' } }, T0 + 1)
    expect((await run.person('u1'))?.properties.plan).toBe('free')
  })

  it('ignores a malformed $set', async () => {
    const { run } = await withPerson()
    const result = await run.stamp('e', 'u1', { $set: 'abc', $set_once: ['x'] })
    expect(result.changes.persons).toEqual([])
  })

  it('$identify without $anon_distinct_id only sets properties', async () => {
    const { run } = await withPerson()
    const result = await run.stamp('$identify', 'u1', { $set: { email: 'a@b.c' } })
    expect(result.personProperties.email).toBe('a@b.c')
    expect((await run.person('u1'))?.isIdentified).toBe(false)
  })

  it('$groupidentify never changes the sender person', async () => {
    const { run } = await withPerson()
    const result = await run.stamp('$groupidentify', 'u1', {
      $group_type: 'company',
      $group_key: 'acme',
      $set: { leak: 1 },
      $unset: ['a'],
    })
    expect(result.changes.persons).toEqual([])
    expect(result.eventProperties).not.toHaveProperty('$set')
    expect(result.eventProperties).not.toHaveProperty('$unset')
    expect((await run.person('u1'))?.properties).toMatchObject({ a: 1, b: 2 })
  })

  it('merges legacy top-level $set / $set_once into the properties ones', async () => {
    const store = new MemoryIdentityStore()
    const result = await applyEvent(store, 1, {
      uuid: 'ev1',
      event: 'e',
      distinct_id: 'u1',
      properties: { $set: { a: 1, b: 1 } },
      $set: { b: 2 },
      $set_once: { c: 3 },
      timestamp_ms: T0,
    })
    expect(result.dropped).toBe(false)
    if (!result.dropped) {
      expect(result.personProperties).toEqual({ a: 1, b: 2, c: 3, $creator_event_uuid: 'ev1' })
    }
  })

  it('warns on a non-boolean $process_person_profile and processes the person', async () => {
    const run = new Runner()
    const result = await run.stamp('e', 'u1', { $process_person_profile: 'no' })
    expect(result.warnings.map((w) => w.type)).toEqual(['invalid_process_person_profile'])
    expect(result.personMode).toBe('full')
    expect(result.changes.persons).toHaveLength(1)
    expect(result.eventProperties).not.toHaveProperty('$process_person_profile')
  })
})

describe('properties copied from the event', () => {
  it('sets the latest value and the first-touch $initial_ value', async () => {
    const run = new Runner()
    const first = await run.stamp('$pageview', 'u1', {
      $browser: 'Chrome',
      utm_source: 'news',
      $current_url: 'https://a.test/',
    })
    const creator = run.lastUuid()
    expect(first.eventProperties.$set).toEqual({
      $browser: 'Chrome',
      utm_source: 'news',
      $current_url: 'https://a.test/',
    })
    expect(first.eventProperties.$set_once).toEqual({
      $initial_browser: 'Chrome',
      $initial_utm_source: 'news',
      $initial_current_url: 'https://a.test/',
    })
    await run.stamp('$pageview', 'u1', {
      $browser: 'Firefox',
      utm_source: null,
      $current_url: 'https://b.test/',
    })
    expect((await run.person('u1'))?.properties).toEqual({
      $browser: 'Firefox',
      $initial_browser: 'Chrome',
      utm_source: null,
      $initial_utm_source: 'news',
      $current_url: 'https://b.test/',
      $initial_current_url: 'https://a.test/',
      $creator_event_uuid: creator,
    })
  })

  it('never records a null first-touch value', async () => {
    const run = new Runner()
    await run.stamp('$pageview', 'u1', { gclid: null })
    await run.stamp('$pageview', 'u1', { gclid: 'abc' })
    const properties = (await run.person('u1'))?.properties
    expect(properties?.gclid).toBe('abc')
    expect(properties?.$initial_gclid).toBe('abc')
  })

  it('lets explicit $set / $set_once win over the copied values', async () => {
    const run = new Runner()
    const result = await run.stamp('$pageview', 'u1', {
      $browser: 'Chrome',
      $set: { $browser: 'Custom' },
      $set_once: { $initial_browser: 'Mosaic' },
    })
    expect(result.personProperties).toMatchObject({ $browser: 'Custom', $initial_browser: 'Mosaic' })
  })

  it('treats $os_name as a fallback for $initial_os only', async () => {
    const run = new Runner()
    const result = await run.stamp('$screen', 'u1', { $os_name: 'iOS' })
    expect(result.eventProperties.$set).toEqual({})
    expect(result.eventProperties.$set_once).toEqual({ $initial_os: 'iOS' })
    expect(result.personProperties).toEqual({ $initial_os: 'iOS', $creator_event_uuid: run.lastUuid() })
  })

  it('does not copy the host OS of server SDKs', async () => {
    const run = new Runner()
    const result = await run.stamp('e', 'u1', { $is_server: true, $os: 'Linux', $browser: 'none' })
    expect(result.personProperties).not.toHaveProperty('$os')
    expect(result.personProperties).not.toHaveProperty('$initial_os')
    expect(result.personProperties.$browser).toBe('none')
  })

  it('leaves recording events alone', async () => {
    const run = new Runner()
    const result = await run.stamp('$snapshot', 'u1', { $browser: 'Chrome' })
    expect(result.eventProperties).not.toHaveProperty('$set')
    expect(result.personProperties).toEqual({ $creator_event_uuid: run.lastUuid() })
  })

  it('does not mutate the input properties', async () => {
    const run = new Runner()
    const properties = { $browser: 'Chrome', $set: { a: 1 }, $groups: { company: 'x' } }
    const copy = structuredClone(properties)
    await run.stamp('$pageview', 'u1', properties)
    expect(properties).toEqual(copy)
  })
})

describe('the person properties an event shows', () => {
  it("is the person's own object when $set changes nothing, a copy with $set on top when it does", async () => {
    const run = new Runner()
    const created = await run.stamp('e', 'u1', { $set: { a: 1, o: { k: [1] } } })
    const creator = run.lastUuid()
    expect(created.personPropertiesShared).toBe(true)
    expect(created.personProperties).toBe(created.changes.persons[0]!.properties)

    const same = await run.stamp('e', 'u1', { $set: { o: { k: [1] }, a: 1 } })
    expect(same.changes.persons).toEqual([])
    expect(same.personPropertiesShared).toBe(true)
    expect(same.personProperties).toEqual({ a: 1, o: { k: [1] }, $creator_event_uuid: creator })
    const none = await run.stamp('e', 'u1', { x: 1 })
    expect(none.personPropertiesShared).toBe(true)

    // $unset of a key $set names: the person loses it, the event still shows what it set.
    const unset = await run.stamp('e', 'u1', { $set: { a: 2 }, $unset: ['a'] })
    expect(unset.changes.persons[0]!.properties).toEqual({ o: { k: [1] }, $creator_event_uuid: creator })
    expect(unset.personPropertiesShared).toBe(false)
    expect(unset.personProperties).toEqual({ o: { k: [1] }, $creator_event_uuid: creator, a: 2 })
    // A change the rules apply: the person's new object is shown as it is.
    const typed = await run.stamp('e', 'u1', { $set: { a: '2' } })
    expect(typed.personPropertiesShared).toBe(true)
    expect(typed.personProperties).toBe(typed.changes.persons[0]!.properties)
    expect(typed.personProperties).toEqual({ o: { k: [1] }, $creator_event_uuid: creator, a: '2' })
  })
})

import { describe, expect, it } from 'vitest'
import { pid, Runner, T0 } from './helpers.ts'

describe('$identify', () => {
  it('attaches the identified id to the anonymous person when only that one exists', async () => {
    const run = new Runner()
    await run.stamp('$pageview', 'anon1', { $set_once: { first_page: '/home' } }, T0)
    const anonCreator = run.lastUuid()
    const result = await run.stamp('$identify', 'user1', {
      $anon_distinct_id: 'anon1',
      $set: { email: 'a@x' },
    })
    expect(result.personId).toBe(pid('anon1'))
    expect(result.warnings).toEqual([])
    expect(result.changes.distinctIds).toEqual([
      { distinctId: 'user1', personId: pid('anon1'), version: 0, isDeleted: false },
    ])
    expect(result.changes.overrides).toEqual([])
    expect(result.changes.deletedPersons).toEqual([])
    expect(await run.person('user1')).toEqual({
      id: pid('anon1'),
      createdAtMs: T0,
      properties: { first_page: '/home', email: 'a@x', $creator_event_uuid: anonCreator },
      isIdentified: true,
      version: 1,
      distinctIds: ['anon1', 'user1'],
      overriddenIds: [],
    })
  })

  it('attaches the anonymous id to the identified person when only that one exists', async () => {
    const run = new Runner()
    await run.stamp('e', 'user1')
    const result = await run.stamp('$identify', 'user1', { $anon_distinct_id: 'anon1' })
    expect(result.personId).toBe(pid('user1'))
    expect(await run.personIdOf('anon1')).toBe(pid('user1'))
    expect((await run.person('user1'))?.isIdentified).toBe(true)
  })

  it('creates one identified person holding both ids when neither exists', async () => {
    const run = new Runner()
    const result = await run.stamp(
      '$identify',
      'n-user',
      { $anon_distinct_id: 'n-anon', $set: { plan: 'pro' } },
      T0,
    )
    expect(result.personId).toBe(pid('n-user'))
    expect(result.changes.persons).toEqual([
      {
        id: pid('n-user'),
        createdAtMs: T0,
        properties: { plan: 'pro', $creator_event_uuid: run.lastUuid() },
        isIdentified: true,
        version: 0,
        distinctIds: ['n-user', 'n-anon'],
        overriddenIds: [],
      },
    ])
    expect(result.changes.distinctIds.map((row) => [row.distinctId, row.personId, row.version])).toEqual([
      ['n-user', pid('n-user'), 0],
      ['n-anon', pid('n-user'), 0],
    ])
    expect(result.changes.overrides).toEqual([])
  })

  it('merges the anonymous person into the identified one when both exist', async () => {
    const run = new Runner()
    await run.stamp('e', 'user2', { $set: { shared: 'from-user', u: 1 } }, T0 - 5000)
    const userCreator = run.lastUuid()
    await run.stamp('e', 'anon2', { $set: { shared: 'from-anon', a: 'anon' } }, T0)
    const result = await run.stamp(
      '$identify',
      'user2',
      { $anon_distinct_id: 'anon2', $set: { email: 'e' } },
      T0 + 9,
    )

    const survivor = {
      id: pid('user2'),
      createdAtMs: T0 - 5000,
      properties: { shared: 'from-user', u: 1, a: 'anon', email: 'e', $creator_event_uuid: userCreator },
      isIdentified: true,
      version: 1,
      distinctIds: ['user2', 'anon2'],
      overriddenIds: [pid('anon2')],
    }
    expect(result.personId).toBe(pid('user2'))
    expect(result.personProperties).toEqual(survivor.properties)
    expect(result.changes.persons).toEqual([survivor])
    expect(result.changes.deletedPersons).toEqual([{ id: pid('anon2'), createdAtMs: T0, version: 100 }])
    expect(result.changes.distinctIds).toEqual([
      { distinctId: 'anon2', personId: pid('user2'), version: 1, isDeleted: false },
    ])
    expect(result.changes.overrides).toEqual([
      { oldPersonId: pid('anon2'), overridePersonId: pid('user2'), version: 1 },
    ])
    expect(await run.store.getPerson(1, pid('anon2'))).toBeUndefined()
    expect(run.resolve(pid('anon2'))).toBe(pid('user2'))
  })

  it('keeps the earliest created_at whichever person is older', async () => {
    const run = new Runner()
    await run.stamp('e', 'old-anon', {}, T0)
    await run.stamp('e', 'new-user', {}, T0 + 50_000)
    await run.stamp('$identify', 'new-user', { $anon_distinct_id: 'old-anon' })
    expect((await run.person('new-user'))?.createdAtMs).toBe(T0)
  })

  it('versions the merged person above both merged versions', async () => {
    const run = new Runner()
    await run.stamp('e', 'anon', { $set: { n: 1 } })
    await run.stamp('e', 'anon', { $set: { n: 2 } })
    await run.stamp('e', 'anon', { $set: { n: 3 } })
    await run.stamp('e', 'user')
    const result = await run.stamp('$identify', 'user', { $anon_distinct_id: 'anon' })
    expect(result.changes.persons[0]?.version).toBe(3)
    expect(result.changes.deletedPersons[0]?.version).toBe(102)
  })

  it('refuses to merge an already identified person and still identifies the target', async () => {
    const run = new Runner()
    await run.stamp('$identify', 'x1', { $anon_distinct_id: 'a1' })
    await run.stamp('e', 'x2')
    const result = await run.stamp('$identify', 'x2', { $anon_distinct_id: 'x1', $set: { k: 'v' } })
    expect(result.warnings).toEqual([
      {
        type: 'cannot_merge_already_identified',
        details: { sourcePersonDistinctId: 'x1', targetPersonDistinctId: 'x2', eventUuid: run.lastUuid() },
      },
    ])
    expect(result.personId).toBe(pid('x2'))
    expect(result.changes.overrides).toEqual([])
    expect(result.changes.deletedPersons).toEqual([])
    expect(await run.personIdOf('x1')).toBe(pid('x1'))
    const target = await run.person('x2')
    expect(target?.isIdentified).toBe(true)
    expect(target?.properties.k).toBe('v')
  })

  it('does not merge when the anonymous id equals the distinct id, and does not identify', async () => {
    const run = new Runner()
    const result = await run.stamp('$identify', 'same', { $anon_distinct_id: 'same' })
    expect(result.warnings).toEqual([])
    expect((await run.person('same'))?.isIdentified).toBe(false)
  })
})

describe('illegal ids', () => {
  it('never merges with an illegal anonymous id', async () => {
    const run = new Runner()
    await run.stamp('e', 'anonymous')
    const result = await run.stamp('$identify', 'user5', { $anon_distinct_id: 'anonymous' })
    expect(result.warnings).toEqual([
      {
        type: 'cannot_merge_with_illegal_distinct_id',
        details: { illegalDistinctId: 'anonymous', otherDistinctId: 'user5', eventUuid: run.lastUuid() },
      },
    ])
    expect(result.personId).toBe(pid('user5'))
    expect(await run.personIdOf('anonymous')).toBe(pid('anonymous'))
    expect((await run.person('user5'))?.isIdentified).toBe(false)
  })

  it('never merges into an illegal distinct id', async () => {
    const run = new Runner()
    const result = await run.stamp('$identify', 'null', { $anon_distinct_id: 'a5' })
    expect(result.warnings[0]?.details).toMatchObject({ illegalDistinctId: 'null', otherDistinctId: 'a5' })
    expect(await run.personIdOf('a5')).toBeUndefined()
    expect((await run.person('null'))?.distinctIds).toEqual(['null'])
  })

  it('treats a null $anon_distinct_id as the illegal id "null"', async () => {
    const run = new Runner()
    const result = await run.stamp('$identify', 'u', { $anon_distinct_id: null })
    expect(result.warnings[0]?.details).toMatchObject({ illegalDistinctId: 'null' })
  })

  it('skips $create_alias with an empty alias silently but warns on a blank one', async () => {
    const run = new Runner()
    const empty = await run.stamp('$create_alias', 'u', { alias: '' })
    expect(empty.warnings).toEqual([])
    const blank = await run.stamp('$create_alias', 'u', { alias: '  ' })
    expect(blank.warnings.map((w) => w.type)).toEqual(['cannot_merge_with_illegal_distinct_id'])
    expect((await run.person('u'))?.distinctIds).toEqual(['u'])
  })
})

describe('$create_alias and $merge_dangerously', () => {
  it('adds a new alias to the distinct_id person', async () => {
    const run = new Runner()
    await run.stamp('e', 'user4')
    const result = await run.stamp('$create_alias', 'user4', { alias: 'user4@mail' })
    expect(result.personId).toBe(pid('user4'))
    expect(await run.personIdOf('user4@mail')).toBe(pid('user4'))
    expect((await run.person('user4'))?.isIdentified).toBe(true)
  })

  it('merges an anonymous alias person into the distinct_id person, whose values win', async () => {
    const run = new Runner()
    await run.stamp('e', 'd1', { $set: { color: 'red' } })
    await run.stamp('e', 'd2', { $set: { color: 'blue', size: 'L' } })
    const result = await run.stamp('$create_alias', 'd1', { alias: 'd2' })
    expect(result.personId).toBe(pid('d1'))
    expect(result.changes.deletedPersons.map((row) => row.id)).toEqual([pid('d2')])
    expect((await run.person('d2'))?.properties).toMatchObject({ color: 'red', size: 'L' })
  })

  it('refuses an alias whose person is already identified', async () => {
    const run = new Runner()
    await run.stamp('$identify', 'd2', { $anon_distinct_id: 'd2-anon' })
    await run.stamp('e', 'd1')
    const result = await run.stamp('$create_alias', 'd1', { alias: 'd2' })
    expect(result.warnings.map((w) => w.type)).toEqual(['cannot_merge_already_identified'])
    expect(await run.personIdOf('d2')).toBe(pid('d2'))
  })

  it('$merge_dangerously merges even an identified person', async () => {
    const run = new Runner()
    await run.stamp('$identify', 'x1', { $anon_distinct_id: 'a1' })
    await run.stamp('e', 'x2')
    const result = await run.stamp('$merge_dangerously', 'x2', { alias: 'x1' })
    expect(result.warnings).toEqual([])
    expect(result.personId).toBe(pid('x2'))
    expect(await run.personIdOf('x1')).toBe(pid('x2'))
    expect(await run.personIdOf('a1')).toBe(pid('x2'))
    expect(run.resolve(pid('x1'))).toBe(pid('x2'))
  })
})

describe('merge chains', () => {
  it('anonymous -> identified -> aliased keeps one person', async () => {
    const run = new Runner()
    const anon = await run.stamp('$pageview', 'ch-anon')
    const identified = await run.stamp('$identify', 'ch-user', { $anon_distinct_id: 'ch-anon' })
    const aliased = await run.stamp('$create_alias', 'ch-user', { alias: 'ch-alias' })
    const later = await run.stamp('$pageview', 'ch-alias')
    for (const result of [anon, identified, aliased, later]) expect(result.personId).toBe(pid('ch-anon'))
    expect((await run.person('ch-alias'))?.distinctIds).toEqual(['ch-anon', 'ch-user', 'ch-alias'])
  })

  it('makes overrides transitive: A into B, then B into C sends A to C', async () => {
    const run = new Runner()
    const a = await run.stamp('e', 'c-anon')
    await run.stamp('e', 'c-user')
    await run.stamp('$identify', 'c-user', { $anon_distinct_id: 'c-anon' })
    await run.stamp('e', 'c-other')
    const result = await run.stamp('$merge_dangerously', 'c-other', { alias: 'c-user' })

    expect(a.personId).toBe(pid('c-anon'))
    expect(result.changes.overrides).toEqual([
      { oldPersonId: pid('c-user'), overridePersonId: pid('c-other'), version: 2 },
      { oldPersonId: pid('c-anon'), overridePersonId: pid('c-other'), version: 2 },
    ])
    expect(run.resolve(pid('c-anon'))).toBe(pid('c-other'))
    expect(run.resolve(pid('c-user'))).toBe(pid('c-other'))
    for (const id of ['c-anon', 'c-user', 'c-other']) expect(await run.personIdOf(id)).toBe(pid('c-other'))
    expect((await run.store.getDistinctId(1, 'c-anon'))?.version).toBe(2)
    expect((await run.store.getDistinctId(1, 'c-user'))?.version).toBe(1)
    expect((await run.person('c-other'))?.overriddenIds).toEqual([pid('c-user'), pid('c-anon')])
  })

  it('raises override versions each time an old id is re-pointed', async () => {
    const run = new Runner()
    await run.stamp('e', 'p1')
    await run.stamp('e', 'p2')
    const first = await run.stamp('$identify', 'p2', { $anon_distinct_id: 'p1' })
    await run.stamp('e', 'p3')
    const second = await run.stamp('$merge_dangerously', 'p3', { alias: 'p2' })
    const v1 = first.changes.overrides.find((row) => row.oldPersonId === pid('p1'))?.version ?? -1
    const v2 = second.changes.overrides.find((row) => row.oldPersonId === pid('p1'))?.version ?? -1
    expect(v2).toBeGreaterThan(v1)
  })
})

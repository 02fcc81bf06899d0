import { describe, expect, it } from 'vitest'
import { Runner, T0 } from './helpers.ts'

describe('$groupidentify', () => {
  it('creates the group and registers its type', async () => {
    const run = new Runner()
    const result = await run.stamp(
      '$groupidentify',
      'u1',
      { $group_type: 'company', $group_key: 'acme', $group_set: { name: 'Acme' } },
      T0,
    )
    expect(result.changes.groupTypes).toEqual([{ groupType: 'company', groupTypeIndex: 0, version: 1 }])
    expect(result.changes.groups).toEqual([
      { groupTypeIndex: 0, groupKey: 'acme', createdAtMs: T0, properties: { name: 'Acme' }, version: 1 },
    ])
    expect(result.groupColumns).toEqual(['', '', '', '', ''])
  })

  it('merges $group_set shallowly and bumps the version only on change', async () => {
    const run = new Runner()
    const props = (set: unknown) => ({ $group_type: 'company', $group_key: 'acme', $group_set: set })
    await run.stamp('$groupidentify', 'u1', props({ name: 'Acme', tier: 1 }), T0)
    const changed = await run.stamp('$groupidentify', 'u1', props({ name: 'Acme Inc', size: 10 }), T0 - 1000)
    expect(changed.changes.groups).toEqual([
      {
        groupTypeIndex: 0,
        groupKey: 'acme',
        createdAtMs: T0 - 1000,
        properties: { name: 'Acme Inc', tier: 1, size: 10 },
        version: 2,
      },
    ])
    const same = await run.stamp('$groupidentify', 'u1', props({ name: 'Acme Inc' }))
    expect(same.changes.groups).toEqual([])
    const none = await run.stamp('$groupidentify', 'u1', props(null))
    expect(none.changes.groups).toEqual([])
    expect((await run.store.getGroup(1, 0, 'acme'))?.version).toBe(2)
  })

  it('registers its own type before the types in $groups', async () => {
    const run = new Runner()
    const result = await run.stamp('$groupidentify', 'u1', {
      $group_type: 'org',
      $group_key: 'o1',
      $group_set: {},
      $groups: { team: 't1' },
    })
    expect(result.changes.groupTypes.map((row) => [row.groupType, row.groupTypeIndex])).toEqual([
      ['org', 0],
      ['team', 1],
    ])
    expect(result.groupColumns).toEqual(['', 't1', '', '', ''])
  })

  it('stringifies the group key', async () => {
    const run = new Runner()
    const result = await run.stamp('$groupidentify', 'u1', { $group_type: 'company', $group_key: 42 })
    expect(result.changes.groups[0]?.groupKey).toBe('42')
    expect(result.changes.groups[0]?.properties).toEqual({})
  })

  it('does nothing to groups without a group key', async () => {
    const run = new Runner()
    const result = await run.stamp('$groupidentify', 'u1', { $group_type: 'company', $group_set: { a: 1 } })
    expect(result.changes.groups).toEqual([])
  })

  it('drops a non-object $group_set and an over-long key', async () => {
    const run = new Runner()
    const badSet = await run.send('$groupidentify', 'u1', {
      $group_type: 'c',
      $group_key: 'k',
      $group_set: 'x',
    })
    expect(badSet.dropped && badSet.reason).toBe('invalid_group_set')
    const longKey = await run.send('$groupidentify', 'u1', { $group_type: 'c', $group_key: 'k'.repeat(401) })
    expect(longKey.dropped && longKey.reason).toBe('group_key_too_long')
    expect(await run.person('u1')).toBeUndefined()
    const okKey = await run.send('$groupidentify', 'u1', { $group_type: 'c', $group_key: 'k'.repeat(400) })
    expect(okKey.dropped).toBe(false)
  })
})

describe('$groups on events', () => {
  it('maps types to $group_N by order of first appearance and never creates a group', async () => {
    const run = new Runner()
    const first = await run.stamp('e', 'u1', { $groups: { b: 'b1' } })
    const second = await run.stamp('e', 'u1', { $groups: { a: 'a1', b: 3 } })
    expect(first.groupColumns).toEqual(['b1', '', '', '', ''])
    expect(second.groupColumns).toEqual(['3', 'a1', '', '', ''])
    expect(second.eventProperties).toMatchObject({ $group_0: 3, $group_1: 'a1' })
    expect(second.changes.groupTypes).toEqual([{ groupType: 'a', groupTypeIndex: 1, version: 1 }])
    expect(first.changes.groups).toEqual([])
    expect(second.changes.groups).toEqual([])
    expect(await run.store.getGroup(1, 0, 'b1')).toBeUndefined()
  })

  it('ignores a sixth group type, on $groups and on $groupidentify', async () => {
    const run = new Runner()
    await run.stamp('e', 'u1', { $groups: { t1: '1', t2: '2', t3: '3', t4: '4', t5: '5' } })
    const sixth = await run.stamp('e', 'u1', { $groups: { t6: 'x', t1: 'a' } })
    expect(sixth.groupColumns).toEqual(['a', '', '', '', ''])
    expect(sixth.changes.groupTypes).toEqual([])
    expect(sixth.eventProperties).not.toHaveProperty('$group_5')
    const identify = await run.stamp('$groupidentify', 'u1', {
      $group_type: 't6',
      $group_key: 'x',
      $group_set: {},
    })
    expect(identify.changes.groups).toEqual([])
    expect((await run.store.getGroupTypes(1)).map((row) => row.groupType)).toEqual([
      't1',
      't2',
      't3',
      't4',
      't5',
    ])
  })

  it('keeps group types per team', async () => {
    const one = new Runner(1)
    await one.stamp('e', 'u1', { $groups: { company: 'c' } })
    const two = new Runner(2)
    two.store.groupTypes.set(1, [{ groupType: 'other', groupTypeIndex: 0 }])
    const result = await two.stamp('e', 'u1', { $groups: { company: 'c' } })
    expect(result.groupColumns).toEqual(['c', '', '', '', ''])
  })

  it('ignores a malformed $groups', async () => {
    const run = new Runner()
    const result = await run.stamp('e', 'u1', { $groups: ['company'] })
    expect(result.groupColumns).toEqual(['', '', '', '', ''])
    expect(result.changes.groupTypes).toEqual([])
  })
})

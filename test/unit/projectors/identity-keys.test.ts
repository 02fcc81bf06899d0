import { describe, expect, it } from 'vitest'
import {
  distinctIdKey,
  distinctIdKeyRef,
  KeyMemo,
  personKey,
  personKeyRef,
  personlessKey,
} from '../../../src/projectors/identity-keys.ts'
import { changesNothing } from '../../../src/projectors/identity/index.ts'
import { emptyChanges } from '../../../src/projectors/identity/session.ts'
import { groupColumns } from '../../../src/projectors/identity/groups.ts'
import { computePropertyUpdates } from '../../../src/projectors/identity/property-updates.ts'

describe('KeyMemo', () => {
  it('makes the value of a name once and hands the same one out again', () => {
    const made: string[] = []
    const memo = new KeyMemo((n: string) => {
      made.push(n)
      return { key: `k.${n}` }
    })
    const a = memo.of('a')
    expect(a).toEqual({ key: 'k.a' })
    expect(memo.of('a')).toBe(a)
    expect(memo.of(String.fromCharCode(97))).toBe(a)
    expect(made).toEqual(['a'])
  })

  it('forgets everything once full, and makes a value again after', () => {
    const made: number[] = []
    const memo = new KeyMemo((n: number) => (made.push(n), `k${n}`), 2)
    memo.of(1)
    memo.of(2)
    memo.of(3) // full: cleared before 3 is kept
    memo.of(1)
    expect(made).toEqual([1, 2, 3, 1])
  })
})

describe('identity keys', () => {
  it('spell the relative keys of the bucket', () => {
    // base64url of "user-1" is dXNlci0x
    expect(distinctIdKey(3, 'user-1')).toBe('t.3.d.bdXNlci0x')
    expect(personlessKey(3, 'user-1')).toBe('t.3.pl.bdXNlci0x')
    expect(personKey(3, '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b')).toBe(
      't.3.p.0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
    )
  })

  it('hand out one key object per team and name', () => {
    const fresh = JSON.parse('"user-9"') as string
    expect(distinctIdKeyRef(3, fresh)).toBe(distinctIdKeyRef(3, 'user-9'))
    expect(distinctIdKeyRef(4, 'user-9')).not.toBe(distinctIdKeyRef(3, 'user-9'))
    expect(distinctIdKeyRef(4, 'user-9').rel).toBe('t.4.d.bdXNlci05')
  })

  it('hold at most 100,000 keys of a kind over all teams, then forget them', () => {
    const first = personKeyRef(1, 'q-0')
    // 100,000 more new names, over two teams: the memo was emptied at least once after `first`
    for (let i = 1; i <= 50_000; i++) personKeyRef(1, `q-${i}`)
    for (let i = 1; i <= 50_000; i++) personKeyRef(2, `q-${i}`)
    const again = personKeyRef(1, 'q-0')
    expect(again).not.toBe(first)
    expect(again.rel).toBe('t.1.p.q-0')
    expect(personKeyRef(1, 'q-0')).toBe(again)
  })
})

describe('what an event changes', () => {
  it('nothing, when no list holds a row', () => {
    expect(changesNothing(emptyChanges(1))).toBe(true)
    const one = { ...emptyChanges(1), personlessDistinctIds: ['u'] }
    expect(changesNothing(one)).toBe(false)
  })

  it('group columns of an event in no group are empty, and the groups it names where it has them', () => {
    expect(groupColumns({ a: 1 })).toEqual(['', '', '', '', ''])
    expect(groupColumns({ $group_1: 'acme', $group_4: 7 })).toEqual(['', 'acme', '', '', '7'])
    expect(groupColumns({ b: 2 })).toEqual(['', '', '', '', ''])
  })

  it('a $set that repeats the person changes nothing and shows the person as it is', () => {
    const u = computePropertyUpdates({ $set: { plan: 'pro' } }, { plan: 'pro', n: 1 }, '$pageview')
    expect(u).toMatchObject({ hasChanges: false, setShown: true, toUnset: [] })
    expect(u.toSet).toEqual({})
    const v = computePropertyUpdates({ $set: { plan: 'free' } }, { plan: 'pro' }, '$pageview')
    expect(v).toMatchObject({ hasChanges: true, setShown: true, toSet: { plan: 'free' } })
    // and the shared answer is not changed by the next event's
    expect(computePropertyUpdates({ $set: { plan: 'pro' } }, { plan: 'pro' }, '$pageview').toSet).toEqual({})
  })
})

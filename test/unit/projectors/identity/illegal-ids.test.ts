import { describe, expect, it } from 'vitest'
import { isDistinctIdIllegal } from '../../../../src/projectors/identity/index.ts'

describe('isDistinctIdIllegal', () => {
  it.each([
    'anonymous',
    'guest',
    'distinctid',
    'distinct_id',
    'id',
    'not_authenticated',
    'email',
    'undefined',
    'true',
    'false',
  ])('rejects %s in any case and quoted', (id) => {
    expect(isDistinctIdIllegal(id)).toBe(true)
    expect(isDistinctIdIllegal(id.toUpperCase())).toBe(true)
    expect(isDistinctIdIllegal(`'${id}'`)).toBe(true)
    expect(isDistinctIdIllegal(`"${id.toUpperCase()}"`)).toBe(true)
  })

  it.each(['[object Object]', 'NaN', 'None', 'none', 'null', '0', 'undefined'])(
    'rejects %s only in that exact case',
    (id) => {
      expect(isDistinctIdIllegal(id)).toBe(true)
      expect(isDistinctIdIllegal(`"${id}"`)).toBe(true)
      expect(isDistinctIdIllegal(`'${id}'`)).toBe(true)
    },
  )

  it('lets other casings of case-sensitive ids through', () => {
    expect(isDistinctIdIllegal('nan')).toBe(false)
    expect(isDistinctIdIllegal('NULL')).toBe(false)
    expect(isDistinctIdIllegal('Null')).toBe(false)
    expect(isDistinctIdIllegal('NONE')).toBe(false)
    expect(isDistinctIdIllegal('[object object]')).toBe(false)
  })

  it('rejects empty and blank ids', () => {
    expect(isDistinctIdIllegal('')).toBe(true)
    expect(isDistinctIdIllegal('   ')).toBe(true)
    expect(isDistinctIdIllegal('\t\n')).toBe(true)
  })

  it('does not trim before the list lookup', () => {
    expect(isDistinctIdIllegal(' anonymous')).toBe(false)
  })

  it('accepts real ids', () => {
    expect(isDistinctIdIllegal('user-42')).toBe(false)
    expect(isDistinctIdIllegal('alice@example.com')).toBe(false)
    expect(isDistinctIdIllegal('00')).toBe(false)
    expect(isDistinctIdIllegal('identity')).toBe(false)
  })
})

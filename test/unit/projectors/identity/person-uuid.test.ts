import { describe, expect, it } from 'vitest'
import { PERSON_UUIDV5_NAMESPACE, uuidFromDistinctId } from '../../../../src/projectors/identity/index.ts'

describe('uuidFromDistinctId', () => {
  // Values published in PostHog's own tests (plugin-server person-uuid test and MissingPerson model test).
  it('matches the person uuids PostHog derives', () => {
    expect(uuidFromDistinctId(1, 'test')).toBe('246f7a43-5507-564f-b687-793ee3c2dd79')
    expect(uuidFromDistinctId(2, 'test')).toBe('00ce873a-549c-548e-bbec-cc804a385dd8')
    expect(uuidFromDistinctId(1, 'test2')).toBe('45c17302-ee44-5596-916a-0eba21f4b638')
  })

  // Expected values from Python's uuid.uuid5(namespace, name) on the name's UTF-8.
  it('hashes the UTF-8 of any id, and a lone surrogate as U+FFFD instead of throwing', () => {
    expect(uuidFromDistinctId(1, 'user-1')).toBe('6931a681-6e90-500d-8294-14582dcc2e3f')
    expect(uuidFromDistinctId(2, '😀')).toBe('67387374-fe5f-5be7-97c0-426cb7f4f399')
    expect(uuidFromDistinctId(1, '\ufffd')).toBe('bdb71854-16e1-5951-9272-721f695a7717')
    expect(uuidFromDistinctId(1, '\ud800')).toBe('bdb71854-16e1-5951-9272-721f695a7717')
    expect(uuidFromDistinctId(1, '\udfff')).toBe('bdb71854-16e1-5951-9272-721f695a7717')
  })

  it('uses the PostHog person namespace', () => {
    expect(PERSON_UUIDV5_NAMESPACE).toBe('932979b4-65c3-4424-8467-0b66ec27bc22')
  })
})

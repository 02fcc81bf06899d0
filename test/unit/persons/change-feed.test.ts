import { describe, expect, it } from 'vitest'
import { personChangesSubject, teamOfSubject } from '../../../src/persons/change-feed.ts'

describe('teamOfSubject', () => {
  it('reads the project of a person change subject', () => {
    expect(teamOfSubject('burrow.persons.changed.42')).toBe(42)
    expect(teamOfSubject(personChangesSubject(1_000_007))).toBe(1_000_007)
  })

  it('is undefined for any other subject', () => {
    for (const subject of [
      'burrow.persons.changed.',
      'burrow.persons.changed.4.2',
      'burrow.persons.changed.x',
      'burrow.persons.other.42',
      'events.live.0',
    ]) {
      expect(teamOfSubject(subject)).toBeUndefined()
    }
  })
})

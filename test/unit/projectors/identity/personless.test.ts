import { describe, expect, it } from 'vitest'
import { PERSONLESS_CREATED_AT_MS } from '../../../../src/projectors/identity/index.ts'
import { pid, Runner, T0 } from './helpers.ts'

const OFF = { $process_person_profile: false }

describe('$process_person_profile=false', () => {
  it('stamps the deterministic id and creates nothing', async () => {
    const run = new Runner()
    const result = await run.stamp('$pageview', 'p1', {
      ...OFF,
      $set: { a: 1 },
      $set_once: { b: 1 },
      $unset: ['c'],
      $browser: 'Chrome',
      $groups: { company: 'acme' },
      $group_0: 'sent-by-client',
    })
    expect(result.personId).toBe(pid('p1'))
    expect(result.personProperties).toEqual({})
    expect(result.personCreatedAtMs).toBe(PERSONLESS_CREATED_AT_MS)
    expect(result.personMode).toBe('propertyless')
    expect(result.groupColumns).toEqual(['', '', '', '', ''])
    expect(result.eventProperties).toEqual({
      $process_person_profile: false,
      $browser: 'Chrome',
      $groups: { company: 'acme' },
    })
    expect(result.changes.persons).toEqual([])
    expect(result.changes.distinctIds).toEqual([])
    expect(result.changes.groupTypes).toEqual([])
    expect(result.changes.personlessDistinctIds).toEqual(['p1'])
    expect(await run.person('p1')).toBeUndefined()
  })

  it('records a personless distinct id once', async () => {
    const run = new Runner()
    await run.stamp('e', 'p1', OFF)
    const second = await run.stamp('e', 'p1', OFF)
    expect(second.changes.personlessDistinctIds).toEqual([])
  })

  it('uses an existing person without changing it', async () => {
    const run = new Runner()
    await run.stamp('e', 'u1', { $set: { a: 1 } }, T0)
    const soon = await run.stamp('e', 'u1', { ...OFF, $set: { a: 2 } }, T0 + 60_000)
    expect(soon.personId).toBe(pid('u1'))
    expect(soon.personProperties).toEqual({})
    expect(soon.personCreatedAtMs).toBe(T0)
    expect(soon.personMode).toBe('propertyless')
    expect(soon.changes.persons).toEqual([])
    const late = await run.stamp('e', 'u1', OFF, T0 + 60_001)
    expect(late.personMode).toBe('force_upgrade')
    expect((await run.person('u1'))?.properties.a).toBe(1)
  })

  it('follows a merged distinct id to its person', async () => {
    const run = new Runner()
    await run.stamp('$identify', 'user', { $anon_distinct_id: 'anon' })
    const result = await run.stamp('e', 'anon', OFF)
    expect(result.personId).toBe(pid('user'))
  })

  it.each(['$identify', '$create_alias', '$merge_dangerously', '$groupidentify'])(
    'drops %s',
    async (name) => {
      const run = new Runner()
      const result = await run.send(name, 'u1', {
        ...OFF,
        $anon_distinct_id: 'a',
        alias: 'b',
        $group_type: 'company',
        $group_key: 'acme',
      })
      expect(result).toEqual({
        dropped: true,
        reason: 'invalid_event_when_process_person_profile_is_false',
        warnings: [],
        changes: {
          teamId: 1,
          persons: [],
          deletedPersons: [],
          distinctIds: [],
          overrides: [],
          personlessDistinctIds: [],
          groupTypes: [],
          groups: [],
        },
      })
    },
  )

  it('removes $process_person_profile=true from stored properties', async () => {
    const run = new Runner()
    const result = await run.stamp('e', 'u1', { $process_person_profile: true, x: 1 })
    expect(result.eventProperties).toEqual({ x: 1 })
    expect(result.personMode).toBe('full')
  })
})

describe('personless ids joining a person', () => {
  it('takes the personless id as the new person id when only it was used personless', async () => {
    const run = new Runner()
    const early = await run.stamp('$pageview', 'p-anon', OFF)
    const result = await run.stamp('$identify', 'p-user', { $anon_distinct_id: 'p-anon' })
    expect(early.personId).toBe(pid('p-anon'))
    expect(result.personId).toBe(pid('p-anon'))
    expect(result.changes.overrides).toEqual([])
    expect(await run.personIdOf('p-user')).toBe(pid('p-anon'))
  })

  it('overrides the second id when both were used personless', async () => {
    const run = new Runner()
    await run.stamp('e', 'q-anon', OFF)
    await run.stamp('e', 'q-user', OFF)
    const result = await run.stamp('$identify', 'q-user', { $anon_distinct_id: 'q-anon' })
    expect(result.personId).toBe(pid('q-user'))
    expect(result.changes.overrides).toEqual([
      { oldPersonId: pid('q-anon'), overridePersonId: pid('q-user'), version: 0 },
    ])
    expect(run.resolve(pid('q-anon'))).toBe(pid('q-user'))
  })

  it('overrides a personless id added to an existing person, transitively on later merges', async () => {
    const run = new Runner()
    await run.stamp('e', 'r-anon', OFF)
    await run.stamp('e', 'r-user')
    const identify = await run.stamp('$identify', 'r-user', { $anon_distinct_id: 'r-anon' })
    expect(identify.changes.overrides).toEqual([
      { oldPersonId: pid('r-anon'), overridePersonId: pid('r-user'), version: 0 },
    ])
    expect((await run.person('r-user'))?.overriddenIds).toEqual([pid('r-anon')])

    await run.stamp('e', 'r-main')
    await run.stamp('$merge_dangerously', 'r-main', { alias: 'r-user' })
    expect(run.resolve(pid('r-anon'))).toBe(pid('r-main'))
    expect(run.resolve(pid('r-user'))).toBe(pid('r-main'))
  })

  it('needs no override when a personless id later gets its own person', async () => {
    const run = new Runner()
    await run.stamp('e', 's1', OFF)
    const result = await run.stamp('e', 's1')
    expect(result.personId).toBe(pid('s1'))
    expect(result.changes.overrides).toEqual([])
  })
})

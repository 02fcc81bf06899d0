import { describe, expect, it } from 'vitest'
import { MemoryIdentityStore, uuidFromDistinctId } from '../../../../src/projectors/identity/index.ts'
import { IdentityRows } from '../../../../src/projectors/identity-rows.ts'
import { applyPersonRules } from '../../../../src/projectors/steps/apply-person-rules.ts'
import { captured, decoded, TEAM } from './helpers.ts'

const persons = (rows: IdentityRows) => rows.tables().find((t) => t.table === 'person')!.lines

describe('applyPersonRules', () => {
  it('stamps the event with its person and records the identity rows and state', async () => {
    const store = new MemoryIdentityStore()
    const rows = new IdentityRows()
    const e = captured({ distinct_id: 'u1', properties: { $set: { email: 'a@x.io' } } })
    const r = await applyPersonRules(store, rows, TEAM, decoded(e))
    expect(r.type).toBe('ok')
    if (r.type !== 'ok') return
    // PostHog's deterministic person id of a new distinct id: uuidv5 of "<team>:<distinct id>"
    expect(r.value.personId).toBe(uuidFromDistinctId(TEAM, 'u1'))
    expect(r.value.personProperties).toMatchObject({ email: 'a@x.io' })
    expect(persons(rows)).toHaveLength(1)
    expect((await store.getDistinctId(TEAM, 'u1'))?.personId).toBe(r.value.personId)
  })

  it('drops an event the rules drop, keeping nothing of it', async () => {
    const store = new MemoryIdentityStore()
    const rows = new IdentityRows()
    // PostHog drops $identify when person processing is off: it only makes sense for a person
    const e = captured({ event: '$identify', properties: { $process_person_profile: false } })
    const r = await applyPersonRules(store, rows, TEAM, decoded(e))
    expect(r).toEqual({ type: 'drop', reason: 'invalid_event_when_process_person_profile_is_false' })
    expect(persons(rows)).toHaveLength(0)
  })

  it('dead-letters an event the rules fail on, and rethrows I/O failures', async () => {
    const rows = new IdentityRows()
    const failing = new MemoryIdentityStore()
    failing.getDistinctId = async () => {
      throw new Error('boom')
    }
    const r = await applyPersonRules(failing, rows, TEAM, decoded())
    expect(r).toEqual({ type: 'dlq', reason: 'projection failed: boom' })
  })
})

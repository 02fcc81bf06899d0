import { describe, expect, it } from 'vitest'
import {
  type IdentityChanges,
  MemoryIdentityStore,
  uuidFromDistinctId,
  type WritableIdentityStore,
} from '../../../../src/projectors/identity/index.ts'
import { IdentityRows } from '../../../../src/projectors/identity-rows.ts'
import { applyPersonRules } from '../../../../src/projectors/steps/apply-person-rules.ts'
import { captured, decoded, TEAM } from './helpers.ts'

// A store that answers every read at once, as the projector's overlay does for state in memory.
function syncStore(): WritableIdentityStore & { failing?: Error } {
  const values = new Map<string, unknown>()
  const store: WritableIdentityStore & { failing?: Error } = {
    getDistinctId: (t, id) => {
      if (store.failing) throw store.failing
      return values.get(`d/${t}/${id}`) as never
    },
    getPerson: (t, id) => values.get(`p/${t}/${id}`) as never,
    isPersonlessDistinctId: (t, id) => values.get(`pl/${t}/${id}`) === true,
    getGroupTypes: (t) => (values.get(`gt/${t}`) ?? []) as never,
    getGroup: (t, i, k) => values.get(`g/${t}/${i}/${k}`) as never,
    applyChanges(c: IdentityChanges) {
      for (const p of c.persons) values.set(`p/${c.teamId}/${p.id}`, p)
      for (const d of c.distinctIds)
        values.set(`d/${c.teamId}/${d.distinctId}`, { personId: d.personId, version: d.version })
      for (const id of c.personlessDistinctIds) values.set(`pl/${c.teamId}/${id}`, true)
    },
  }
  return store
}

const events = [
  captured({ distinct_id: 'u1', properties: { $set: { email: 'a@x.io' }, $current_url: 'https://x.io/a' } }),
  captured({ distinct_id: 'u1', properties: { $current_url: 'https://x.io/b' } }),
  captured({ distinct_id: 'u1', properties: { $set: { email: 'b@x.io' } } }),
  captured({ distinct_id: 'u2', properties: { $process_person_profile: false } }),
]

describe('applyPersonRules over a store that answers at once', () => {
  it('decides without a promise, the same persons as over a store that answers with promises', async () => {
    const sync = syncStore()
    const memory = new MemoryIdentityStore()
    const [syncRows, memoryRows] = [new IdentityRows(), new IdentityRows()]
    for (const e of events) {
      const now = applyPersonRules(sync, syncRows, TEAM, decoded(e))
      // u2 is personless: its rules read whether it was stamped before, and that read still waits
      if (e.distinct_id === 'u1') expect(now).not.toBeInstanceOf(Promise)
      const a = await now
      const b = await applyPersonRules(memory, memoryRows, TEAM, decoded(e))
      expect(a.type).toBe('ok')
      expect(a).toEqual(b)
    }
    expect(syncRows.tables()).toEqual(memoryRows.tables())
    const u1 = await applyPersonRules(sync, new IdentityRows(), TEAM, decoded(events[1]))
    expect(u1.type === 'ok' && u1.value.personId).toBe(uuidFromDistinctId(TEAM, 'u1'))
    expect(u1.type === 'ok' && u1.value.personProperties).toMatchObject({ email: 'b@x.io' })
  })

  it('dead-letters an event whose rules throw at once', async () => {
    const store = syncStore()
    store.failing = new Error('boom')
    const r = await applyPersonRules(store, new IdentityRows(), TEAM, decoded())
    expect(r).toEqual({ type: 'dlq', reason: 'projection failed: boom' })
  })
})

import { describe, expect, it } from 'vitest'
import {
  applyEvent,
  type IdentityChanges,
  type Properties,
} from '../../../../src/projectors/identity/index.ts'
import { IdentityOverlay } from '../../../../src/projectors/identity-store/overlay.ts'
import type { KvIdentityStore } from '../../../../src/projectors/identity-store/store.ts'
import type { StateValue } from '../../../../src/projectors/identity-store/reads.ts'
import { distinctIdKey, groupTypesKey, personKey } from '../../../../src/projectors/identity-keys.ts'
import { uuidFromDistinctId } from '../../../../src/projectors/identity/person-uuid.ts'

// The identity state is immutable (docs/projectors.md, "Identity state"): the overlay hands out and
// keeps values without copying them, so the person rules must never change a value they read nor
// one they set. Here every value is frozen the moment it enters the state (committed or set by an
// event); a rule that changed one would throw (modules are strict), and the event would fail.

const TEAM = 1
const T0 = Date.UTC(2024, 0, 1)

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const v of Object.values(value)) deepFreeze(v)
  }
  return value
}

/** A committed store answered from memory, its values frozen. */
function committed(values: Record<string, StateValue>): KvIdentityStore {
  const map = new Map(Object.entries(values).map(([k, v]) => [k, deepFreeze(v)]))
  const peek = (_team: number, rel: string) => map.get(rel) ?? null
  return { peek, read: async (team: number, rel: string) => peek(team, rel) } as unknown as KvIdentityStore
}

const existing = deepFreeze({
  id: uuidFromDistinctId(TEAM, 'old'),
  createdAtMs: T0,
  properties: { plan: 'free', nested: { a: [1, 2] } },
  isIdentified: false,
  version: 3,
  distinctIds: ['old'],
  overriddenIds: [],
})

describe('IdentityOverlay over frozen state', () => {
  it('runs the person and group rules without changing any value they read or set', async () => {
    const base = committed({
      [personKey(TEAM, existing.id)]: existing,
      [distinctIdKey(TEAM, 'old')]: { personId: existing.id, version: 0 },
      [groupTypesKey(TEAM)]: [{ groupType: 'company', groupTypeIndex: 0 }],
    })
    let n = 0
    const send = async (
      overlay: IdentityOverlay,
      event: string,
      distinctId: string,
      properties: Properties,
    ) => {
      n++
      const result = await applyEvent(overlay, TEAM, {
        uuid: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
        event,
        distinct_id: distinctId,
        properties: deepFreeze(properties),
        timestamp_ms: T0 + n * 1000,
      })
      await overlay.applyChanges(result.changes)
      deepFreeze(result.changes satisfies IdentityChanges)
      return result
    }
    // Two batches: the second reads through the first (uncommitted) one, as a pipelined lane does.
    const first = new IdentityOverlay(base)
    await send(first, '$pageview', 'old', {
      $set: { plan: 'pro' },
      $set_once: { first: 1 },
      $unset: ['nested'],
    })
    await send(first, '$pageview', 'anon', { $browser: 'Chrome', $current_url: 'https://a.example/' })
    await send(first, 'clicked', 'quiet', { $process_person_profile: false })
    await send(first, '$identify', 'old', { $anon_distinct_id: 'quiet' })
    await send(first, '$groupidentify', 'old', {
      $group_type: 'project',
      $group_key: 'p1',
      $group_set: { name: 'One' },
    })
    const second = new IdentityOverlay(base, first)
    await send(second, '$groupidentify', 'old', {
      $group_type: 'project',
      $group_key: 'p1',
      $group_set: { size: 2 },
    })
    await send(second, 'bought', 'anon', { $groups: { company: 'acme', team: 't1' }, $set: { plan: 'x' } })
    await send(second, '$identify', 'anon', { $anon_distinct_id: 'old' })
    const merged = await send(second, '$merge_dangerously', 'anon', { alias: 'old', $set: { plan: 'y' } })

    // What the rules decided, written out by hand.
    expect(merged.dropped).toBe(false)
    const person = await second.getPerson(TEAM, uuidFromDistinctId(TEAM, 'anon'))
    expect(person?.distinctIds).toEqual(['anon', 'old', 'quiet'])
    expect(person?.properties).toEqual({
      plan: 'y',
      first: 1,
      $browser: 'Chrome',
      $current_url: 'https://a.example/',
      $initial_browser: 'Chrome',
      $initial_current_url: 'https://a.example/',
      $creator_event_uuid: '00000000-0000-4000-8000-000000000002',
    })
    expect(await second.getPerson(TEAM, existing.id)).toBeUndefined()
    expect(await second.getGroupTypes(TEAM)).toEqual([
      { groupType: 'company', groupTypeIndex: 0 },
      { groupType: 'project', groupTypeIndex: 1 },
      { groupType: 'team', groupTypeIndex: 2 },
    ])
    expect((await second.getGroup(TEAM, 1, 'p1'))?.properties).toEqual({ name: 'One', size: 2 })
    // Shared, not copied: the committed value itself, unchanged.
    expect(await new IdentityOverlay(base).getPerson(TEAM, existing.id)).toBe(existing)
    expect(existing.properties).toEqual({ plan: 'free', nested: { a: [1, 2] } })
  })
})

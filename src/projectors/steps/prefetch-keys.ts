import type { DecodedEvent } from '../decode.ts'
import { distinctIdKey, groupTypesKey, personKey, personlessKey } from '../identity-keys.ts'
import type { KvIdentityStore } from '../identity-store/store.ts'

/** The identity keys a batch will read, fetched ahead in two waves (distinct ids, then their persons). */
export interface KeyRef {
  team: number
  rel: string
}

interface TeamEvents {
  teamId: number
  ns: string
  events: DecodedEvent[]
}

/**
 * First wave: each team's group types (which loads a team small enough whole, on first sight) and,
 * per distinct id an event names, its two keys; none for a team whose state memory holds whole.
 */
export function distinctIdKeys(store: Pick<KvIdentityStore, 'holdsWhole'>, work: TeamEvents[]): KeyRef[] {
  const keys: KeyRef[] = []
  const seen = new Set<number>()
  for (const w of work) {
    const team = w.teamId
    if (!seen.has(team)) {
      seen.add(team)
      keys.push({ team, rel: groupTypesKey(team) })
    }
    if (store.holdsWhole(team)) continue
    const idKeys = (id: string) =>
      keys.push({ team, rel: distinctIdKey(team, id) }, { team, rel: personlessKey(team, id) })
    for (const { event: e } of w.events) {
      idKeys(e.distinct_id)
      const p = e.properties
      if (typeof p.$anon_distinct_id === 'string') idKeys(p.$anon_distinct_id)
      if (typeof p.alias === 'string') idKeys(p.alias)
    }
  }
  return keys
}

/** Second wave: the persons the first wave found (read from the cache, no round trip). */
export function personKeys(store: KvIdentityStore, work: TeamEvents[]): KeyRef[] {
  const keys: KeyRef[] = []
  for (const w of work) {
    if (store.holdsWhole(w.teamId)) continue
    for (const { event: e } of w.events) {
      const d = store.cached(w.ns, distinctIdKey(w.teamId, e.distinct_id)) as { personId?: string } | null
      if (d?.personId) keys.push({ team: w.teamId, rel: personKey(w.teamId, d.personId) })
    }
  }
  return keys
}

import {
  applyEvent,
  MemoryIdentityStore,
  type Properties,
  type StampedEvent,
  uuidFromDistinctId,
} from '../../../../src/projectors/identity/index.ts'

export const TEAM = 1
export const T0 = Date.UTC(2024, 0, 1, 12, 0, 0)

export function pid(distinctId: string, teamId = TEAM): string {
  return uuidFromDistinctId(teamId, distinctId)
}

// Feeds events through applyEvent in order and applies each event's changes, like the projector does.
export class Runner {
  readonly store = new MemoryIdentityStore()
  private count = 0

  constructor(readonly teamId = TEAM) {}

  async send(event: string, distinctId: string, properties: Properties = {}, timestampMs?: number) {
    this.count += 1
    const result = await applyEvent(this.store, this.teamId, {
      uuid: `00000000-0000-4000-8000-${String(this.count).padStart(12, '0')}`,
      event,
      distinct_id: distinctId,
      properties,
      timestamp_ms: timestampMs ?? T0 + this.count * 1000,
    })
    await this.store.applyChanges(result.changes)
    return result
  }

  async stamp(event: string, distinctId: string, properties: Properties = {}, timestampMs?: number) {
    const result = await this.send(event, distinctId, properties, timestampMs)
    if (result.dropped) throw new Error(`unexpected drop: ${result.reason}`)
    return result as StampedEvent
  }

  async person(distinctId: string) {
    const row = await this.store.getDistinctId(this.teamId, distinctId)
    return row && this.store.getPerson(this.teamId, row.personId)
  }

  async personIdOf(distinctId: string) {
    return (await this.store.getDistinctId(this.teamId, distinctId))?.personId
  }

  resolve(personId: string) {
    return this.store.resolvePersonId(this.teamId, personId)
  }

  lastUuid() {
    return `00000000-0000-4000-8000-${String(this.count).padStart(12, '0')}`
  }
}

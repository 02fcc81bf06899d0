import { PostHog } from 'posthog-node'
import { beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import type { NatsConnection } from '../../../src/jetstream/connection.ts'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import { createTestProject, nats, startTestBurrow } from '../../harness/index.ts'
import { waitForEvents } from '../../harness/log.ts'

let burrow: RunningBurrow
let project: Project
let nc: NatsConnection

beforeAll(async () => {
  burrow = await startTestBurrow()
  project = await createTestProject('posthog-node')
  nc = await nats()
})

describe('posthog-node pointed at Burrow', () => {
  it('delivers capture, identify, alias and groupIdentify with their properties', async () => {
    const client = new PostHog(project.api_token, { host: burrow.url, flushAt: 1, flushInterval: 0 })
    client.capture({
      distinctId: 'node-user',
      event: 'order placed',
      properties: { amount: 42, currency: 'EUR' },
      groups: { company: 'acme' },
    })
    client.identify({ distinctId: 'node-user', properties: { email: 'a@example.com' } })
    client.alias({ distinctId: 'node-user', alias: 'node-alias' })
    client.groupIdentify({ groupType: 'company', groupKey: 'acme', properties: { plan: 'enterprise' } })
    await client.shutdown()

    const events = await waitForEvents(nc, project.id, 4)
    const byName = Object.fromEntries(events.map((e) => [e.event, e]))
    expect(Object.keys(byName).sort()).toEqual([
      '$create_alias',
      '$groupidentify',
      '$identify',
      'order placed',
    ])

    expect(byName['order placed']).toMatchObject({
      distinct_id: 'node-user',
      properties: { amount: 42, currency: 'EUR', $groups: { company: 'acme' }, $lib: 'posthog-node' },
    })
    expect(byName.$identify).toMatchObject({
      distinct_id: 'node-user',
      properties: { $set: { email: 'a@example.com' } },
    })
    expect(byName.$create_alias).toMatchObject({
      distinct_id: 'node-user',
      properties: { alias: 'node-alias' },
    })
    expect(byName.$groupidentify).toMatchObject({
      properties: { $group_type: 'company', $group_key: 'acme', $group_set: { plan: 'enterprise' } },
    })
    // the SDK sends its own uuids and timestamps; Burrow keeps the uuids
    for (const e of events) expect(e.uuid).toMatch(/^[0-9a-f-]{36}$/)
    expect(new Set(events.map((e) => e.uuid)).size).toBe(4)
  })
})

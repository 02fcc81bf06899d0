import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ensureDefaults } from '../../../src/accounts/bootstrap.ts'
import { AccountStore } from '../../../src/accounts/store.ts'
import { connectNats, migrateJetStream } from '../../../src/jetstream/connection.ts'
import { startNatsServer } from '../../../src/stack/nats-server.ts'
import { freePort } from '../../../src/stack/ports.ts'
import { stack, tempDir } from '../../harness/index.ts'

describe('ensureDefaults', () => {
  const cleanup: (() => Promise<unknown>)[] = []
  afterAll(async () => {
    for (const c of cleanup.reverse()) await c()
  })

  it('gives the default key an owner in project 1’s organization even when projects came first', async () => {
    // a NATS of its own: the shared one already has a default user
    const nats = await startNatsServer({
      bin: stack().bins.nats,
      dataDir: join(tempDir(), 'nats'),
      port: await freePort(),
    })
    cleanup.push(() => nats.stop())
    const nc = await connectNats(nats.url)
    cleanup.push(() => nc.close())
    await migrateJetStream(nc, { eventsMaxAgeSeconds: 0 })
    const store = await AccountStore.open(nc)
    const org = await store.createOrganization('made by projects create')
    await store.createProject({ name: 'first', organization_id: org.id })

    const dir = tempDir()
    const { credentials, created } = await ensureDefaults(store, dir)
    expect(created).toBe(true)
    expect(credentials.project_id).toBe(1)
    const key = await store.personalKey(credentials.personal_api_key)
    const owner = await store.getUser(key!.user_id)
    expect(owner?.organization_id).toBe(org.id)

    const again = await ensureDefaults(store, dir)
    expect(again).toEqual({ credentials, created: false })
  })
})

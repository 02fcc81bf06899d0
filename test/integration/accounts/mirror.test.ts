import { join } from 'node:path'
import type { KV } from '@nats-io/kv'
import { z } from 'zod'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AccountMirror } from '../../../src/accounts/mirror.ts'
import { AccountStore, hashKey as hashOf } from '../../../src/accounts/store.ts'
import { connectNats, migrateJetStream, type NatsConnection } from '../../../src/jetstream/connection.ts'
import { startNatsServer } from '../../../src/stack/nats-server.ts'
import { freePort } from '../../../src/stack/ports.ts'
import { stack, tempDir } from '../../harness/index.ts'

// The accounts mirror (src/accounts/mirror.ts): authentication reads keys, users and projects from
// memory kept by a watch, and a revocation must still be refused at once.

/** Counts the bucket reads made through `kv` (the real bucket; reads still happen). */
function countGets(kv: KV): { n: number } {
  const count = { n: 0 }
  const get = kv.get.bind(kv)
  kv.get = (...args: Parameters<KV['get']>) => {
    count.n++
    return get(...args)
  }
  return count
}

async function until(what: string, ok: () => Promise<boolean>, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`)
    await new Promise((r) => setTimeout(r, 5))
  }
}

const anyDoc = z.unknown()

describe('accounts mirror', () => {
  const cleanup: (() => Promise<unknown>)[] = []
  let here: AccountStore // a process that authenticates (mirrored)
  let elsewhere: AccountStore // another process (the CLI, another api process)
  let mirror: AccountMirror
  let gets: { n: number }
  let ncHere: NatsConnection

  beforeAll(async () => {
    // a NATS of its own: no other test's accounts in the bucket
    const server = await startNatsServer({
      bin: stack().bins.nats,
      dataDir: join(tempDir(), 'nats'),
      port: await freePort(),
    })
    cleanup.push(() => server.stop())
    ncHere = await connectNats(server.url)
    const ncThere = await connectNats(server.url)
    cleanup.push(
      () => ncHere.close(),
      () => ncThere.close(),
    )
    await migrateJetStream(ncHere, { eventsMaxAgeSeconds: 0 })
    elsewhere = await AccountStore.open(ncThere)
    here = await AccountStore.open(ncHere)
    gets = countGets(here.kv)
    mirror = await AccountMirror.start(here.kv, ncHere, console)
    cleanup.push(async () => mirror.stop())
    here.useMirror(mirror)
  })
  afterAll(async () => {
    for (const c of cleanup.reverse()) await c()
  })

  async function account(store: AccountStore) {
    const org = await store.createOrganization('mirror')
    const user = await store.createUser({ organization_id: org.id, email: `${Date.now()}@x.test` })
    const project = await store.createProject({ name: 'mirrored', organization_id: org.id })
    const { key, doc } = await store.createPersonalKey({
      user_id: user.id,
      label: 'm',
      scopes: ['*'],
      projects: null,
    })
    return { user, project, key, doc }
  }

  it('authenticates from memory, and follows writes made by another process', async () => {
    const a = await account(elsewhere)
    // the watch brings what another process wrote
    await until(
      'the key reaches the mirror',
      async () => mirror.lookup(`pak.${hashOf(a.key)}`, anyDoc) !== undefined,
    )
    await until(
      'the project reaches the mirror',
      async () => mirror.lookup(`project.${a.project.id}`, anyDoc) !== undefined,
    )
    const before = gets.n
    for (let i = 0; i < 20; i++) {
      expect((await here.authKey(a.key))?.id).toBe(a.doc.id)
      expect((await here.authUser(a.user.id))?.email).toBe(a.user.email)
      expect((await here.authProject(a.project.id))?.name).toBe('mirrored')
    }
    expect(gets.n - before).toBe(0)
    // other readers read the bucket: a cache rebuilt after its own watch saw a change must see it
    expect((await here.getProject(a.project.id))?.name).toBe('mirrored')
    expect(gets.n - before).toBe(1)
    // an unknown key is read from the bucket (it may have been created a moment ago elsewhere)
    expect(await here.authKey('phx_not_a_key')).toBeUndefined()
    expect(gets.n - before).toBe(2)

    // revoked elsewhere: refused here once the watch delivers it (milliseconds), then from memory
    expect(await elsewhere.revokePersonalKey(a.doc.id)).toBe(true)
    await until(
      'the revocation reaches the mirror',
      async () => (await here.authKey(a.key)) === undefined,
      2000,
    )
    const after = gets.n
    expect(await here.authKey(a.key)).toBeUndefined()
    expect(gets.n).toBe(after)
  })

  it('a write made here is seen by the very next read (revocation, project change)', async () => {
    const a = await account(here)
    expect((await here.authKey(a.key))?.id).toBe(a.doc.id)
    for (let i = 0; i < 5; i++) {
      const zone = i % 2 ? 'Europe/Paris' : 'Asia/Tokyo'
      await here.updateProject(a.project.id, (p) => ({ ...p, timezone: zone }))
      expect((await here.authProject(a.project.id))?.timezone).toBe(zone)
    }
    expect(await here.revokePersonalKey(a.doc.id)).toBe(true)
    expect(await here.authKey(a.key)).toBeUndefined()
  })

  it('answers from the bucket while disconnected, and from memory again after a new load', async () => {
    const a = await account(here)
    const key = `pak.${hashOf(a.key)}`
    expect(mirror.lookup(key, anyDoc)).toBeDefined()
    void ncHere.reconnect()
    await until('the mirror drops on the disconnect', async () => mirror.lookup(key, anyDoc) === undefined)
    await until('the mirror loads again', async () => mirror.lookup(key, anyDoc) !== undefined)
    expect((await here.authKey(a.key))?.id).toBe(a.doc.id)
  })
})

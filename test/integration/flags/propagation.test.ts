import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import { FlagCache } from '../../../src/flags/cache.ts'
import { flagCreateSchema } from '../../../src/flags/definition.ts'
import { FlagStore } from '../../../src/flags/definition-store.ts'
import { createLogger } from '../../../src/observability/logger.ts'
import { freePort } from '../../../src/stack/ports.ts'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import { type CliProcess, spawnBurrow } from '../../harness/cli.ts'
import { api, createTestKey, createTestProject, nats, stack, tempDir } from '../../harness/index.ts'
import { flagInput, post, startFlagsBurrow, stopFlagsBurrows, waitFor } from './helpers.ts'

// Definitions reach every evaluating process through the KV watch, not by polling.

let writer: RunningBurrow
let readerUrl: string
let readerProcess: CliProcess
let project: Project
let call: ReturnType<typeof api>

beforeAll(async () => {
  // the API in this process; evaluation in a second Burrow process (role capture) on the same NATS
  writer = await startFlagsBurrow()
  const s = stack()
  const port = await freePort()
  readerProcess = spawnBurrow(['start', '--role', 'capture'], {
    NATS_URL: s.natsUrl,
    CLICKHOUSE_URL: s.clickhouseUrl,
    CLICKHOUSE_DATABASE: s.database,
    DATA_DIR: tempDir('burrow-flags-reader-'),
    PORT: String(port),
  })
  await readerProcess.waitFor(/Burrow listening on/)
  readerUrl = `http://127.0.0.1:${port}`
  project = await createTestProject('flags propagation')
  call = api(writer.url, await createTestKey(['feature_flag:write']))
})
afterAll(async () => {
  readerProcess?.child.kill('SIGTERM')
  await readerProcess?.exited
  await stopFlagsBurrows()
})

const def = (key: string) => flagCreateSchema.parse(flagInput(key, { groups: [{ properties: [] }] }))

const value = async (key: string) => {
  const r = await post(readerUrl, '/decide?v=3', { api_key: project.api_token, distinct_id: 'prop-user' })
  return r.body.featureFlags[key] as boolean | string | undefined
}

describe('definition changes across processes', () => {
  it('shows a create, an edit, a deactivation and a delete in another process within a second', async () => {
    const base = `/api/projects/${project.id}/feature_flags`
    const created = await call(
      'POST',
      `${base}/`,
      flagInput('prop-flag', { groups: [{ properties: [], rollout_percentage: 100 }] }),
    )
    expect(created.status).toBe(201)
    const timings: number[] = []
    timings.push(await waitFor(async () => (await value('prop-flag')) === true, 1000))

    await call('PATCH', `${base}/${created.body.id}/`, {
      filters: {
        groups: [{ properties: [], rollout_percentage: 100 }],
        multivariate: { variants: [{ key: 'v2', rollout_percentage: 100 }] },
      },
    })
    timings.push(await waitFor(async () => (await value('prop-flag')) === 'v2', 1000))

    await call('PATCH', `${base}/${created.body.id}/`, { active: false })
    timings.push(await waitFor(async () => (await value('prop-flag')) === undefined, 1000))

    await call('PATCH', `${base}/${created.body.id}/`, { active: true })
    timings.push(await waitFor(async () => (await value('prop-flag')) === 'v2', 1000))
    await call('PATCH', `${base}/${created.body.id}/`, { deleted: true })
    timings.push(await waitFor(async () => (await value('prop-flag')) === undefined, 1000))
    for (const ms of timings) expect(ms).toBeLessThan(1000)
  })
})

describe('FlagCache', () => {
  it('loads what the bucket holds at start, then applies pushed changes', async () => {
    const nc = await nats()
    const store = await FlagStore.open(nc)
    const team = (await createTestProject('flags cache')).id
    const first = await store.create(team, def('cache-a'), null)

    const cache = await FlagCache.start(store.kv, createLogger('silent'))
    try {
      expect(cache.flags(team).map((f) => f.key)).toEqual(['cache-a'])
      const changed: number[] = []
      cache.onChange((t) => changed.push(t))

      await store.create(team, def('cache-b'), null)
      await waitFor(() => cache.flags(team).length === 2, 1000)
      await store.update(team, first.id, { name: 'renamed' })
      await waitFor(() => cache.flags(team)[0]?.name === 'renamed', 1000)
      expect(cache.flags(team)[0]?.version).toBe(2)
      // a removed entry disappears (operators may purge a flag by hand)
      await store.kv.delete(`flag.${team}.${first.id}`)
      await waitFor(() => cache.flags(team).length === 1, 1000)
      expect(cache.flags(team).map((f) => f.key)).toEqual(['cache-b'])
      expect(changed.every((t) => t === team)).toBe(true)
      expect(changed.length).toBeGreaterThanOrEqual(3)
    } finally {
      cache.stop()
    }
  })

  it('starts on an empty project and other projects stay separate', async () => {
    const nc = await nats()
    const store = await FlagStore.open(nc)
    const cache = await FlagCache.start(store.kv, createLogger('silent'))
    try {
      const team = (await createTestProject('flags cache empty')).id
      expect(cache.flags(team)).toEqual([])
      await store.create(team, def('only-here'), null)
      await waitFor(() => cache.flags(team).length === 1, 1000)
      expect(cache.flags(team + 100_000)).toEqual([])
    } finally {
      cache.stop()
    }
  })
})

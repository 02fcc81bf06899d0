// `burrow cluster up` as a user runs it: 3 nats-servers, 2 projector and 2 capture processes. Its
// one JSON line describes the parts; events sent to both capture processes are queryable through
// the api; the projectors share the partitions (each leased by one), a killed projector's partitions
// are taken over, and SIGTERM stops every process.
import { jetstreamManager } from '@nats-io/jetstream'
import { Kvm } from '@nats-io/kv'
import { afterAll, describe, expect, it } from 'vitest'
import { BUCKETS } from '../../../schema/jetstream.ts'
import { partitionOf } from '../../../src/jetstream/messages.ts'
import { connectNats } from '../../../src/jetstream/connection.ts'
import type { ClusterDescription } from '../../../src/stack/cluster.ts'
import { type CliProcess, processAlive, spawnBurrow } from '../../harness/cli.ts'
import { api, tempDir } from '../../harness/index.ts'
import { makeEvents, sendBatch, sleep } from '../reliability/helpers.ts'

const PARTITIONS = 4
let up: CliProcess | undefined

afterAll(async () => {
  if (up && up.child.exitCode === null) {
    up.child.kill('SIGTERM')
    await up.exited
  }
})

async function countEvents(d: ClusterDescription, tag: string): Promise<number> {
  const res = await api(d.api_url, d.credentials.personal_api_key)(
    'POST',
    `/api/projects/${d.credentials.project_id}/query/`,
    {
      query: { kind: 'HogQLQuery', query: `SELECT count() FROM events WHERE properties.tag = '${tag}'` },
      refresh: 'force_blocking',
    },
  )
  expect(res.status).toBe(200)
  return Number((res.body as { results: number[][] }).results[0]![0])
}

async function waitCount(d: ClusterDescription, tag: string, want: number): Promise<number> {
  let n = -1
  for (let i = 0; i < 120 && n !== want; i++) {
    n = await countEvents(d, tag)
    if (n !== want) await sleep(500)
  }
  return n
}

describe('burrow cluster up', () => {
  it('starts the topology, shares partitions between projectors, takes over a dead one, stops all', async () => {
    const dir = tempDir('burrow-cluster-')
    up = spawnBurrow(['cluster', 'up', '--nats', '3', '--projectors', '2', '--capture', '2'], {
      DATA_DIR: dir,
      LOG_PARTITIONS: String(PARTITIONS),
      LOG_LEVEL: 'warn',
    })
    const [line] = await up.waitFor(/^\{"capture_urls".*\}$/m, 150_000)
    const d = JSON.parse(line) as ClusterDescription
    expect(d.nats_urls).toHaveLength(3)
    expect(d.clickhouse_urls).toHaveLength(1)
    expect(d.capture_urls).toHaveLength(2)
    expect(d.pids.projectors).toHaveLength(2)
    expect(d.credentials.project_api_key).toMatch(/^phc_/)

    const token = d.credentials.project_api_key
    for (const [i, url] of d.capture_urls.entries()) {
      expect(
        await sendBatch(
          url,
          token,
          makeEvents(50, 'first', 10).map((e) => ({ ...e, event: `e${i}` })),
        ),
      ).toBe(200)
    }
    expect(await waitCount(d, 'first', 100)).toBe(100)

    // every partition leased by exactly one of the two projectors, each holding its fair share
    const nc = await connectNats(d.nats_urls.join(','), 'cluster-test')
    try {
      const kv = await new Kvm(nc).open(BUCKETS.projectorLeases.name)
      const owners = new Map<number, string>()
      for (let i = 0; i < 40; i++) {
        owners.clear()
        for (let p = 0; p < PARTITIONS; p++) {
          const e = await kv.get(`lease.${p}`)
          if (e && e.operation === 'PUT') owners.set(p, e.string())
        }
        const per = new Map<string, number>()
        for (const o of owners.values()) per.set(o, (per.get(o) ?? 0) + 1)
        if (owners.size === PARTITIONS && per.size === 2 && [...per.values()].every((n) => n === 2)) break
        await sleep(500)
      }
      expect(owners.size).toBe(PARTITIONS)
      expect(new Set(owners.values()).size).toBe(2)

      // kill the owner of the default project's partition; the other process takes it over
      const owner = owners.get(partitionOf(d.credentials.project_id, PARTITIONS))!
      const victim = d.pids.projectors.find((pid) => owner.includes(`-${pid}-`))!
      expect(victim).toBeDefined()
      process.kill(victim, 'SIGKILL')
      expect(await sendBatch(d.capture_urls[0]!, token, makeEvents(30, 'second', 10))).toBe(200)
      expect(await waitCount(d, 'second', 30)).toBe(30)
      // nothing written twice by the takeover
      expect(await countEvents(d, 'first')).toBe(100)
      const jsm = await jetstreamManager(nc)
      expect((await jsm.streams.info('EVENTS')).config.num_replicas).toBe(3)
    } finally {
      await nc.close()
    }

    up.child.kill('SIGTERM')
    expect(await up.exited).toBe(0)
    const all = [...d.pids.nats, ...d.pids.clickhouse, ...d.pids.capture, ...d.pids.projectors, ...d.pids.api]
    expect(all.filter(processAlive)).toEqual([])
  })
})

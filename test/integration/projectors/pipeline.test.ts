import { v5 as uuidv5 } from 'uuid'
import { beforeAll, describe, expect, it } from 'vitest'
import type { CapturedEvent } from '../../../src/jetstream/messages.ts'
import { clickhouse, createTestProject, nats } from '../../harness/index.ts'
import {
  distinctIds,
  ev,
  eventPersons,
  PERSON_NAMESPACE,
  persons,
  runProjector,
  type TestLog,
  testLog,
  waitIdle,
  writerWithFault,
} from './helpers.ts'

// The pipelined projector (batch N+1 decided while N is written and N-1 committed) must give exactly
// the views of one batch at a time, also when a batch fails half-way and the batches in flight are
// given back. Merges and person updates cross batch boundaries on purpose.

const ch = clickhouse()
let log: TestLog

beforeAll(async () => {
  log = await testLog(await nats())
})

const BASE = Date.UTC(2024, 2, 1)

function chunks(team: number): CapturedEvent[][] {
  return Array.from({ length: 12 }, (_, i) => {
    const at = (k: number) => new Date(BASE + (i * 5 + k) * 60_000).toISOString()
    const user = `user-${i % 4}`
    const alias = `alias-${i % 5}`
    return [
      ev(team, '$pageview', `anon-${i}`, { $current_url: `https://x.io/${i}` }, at(0)),
      ev(team, '$identify', user, { $anon_distinct_id: `anon-${i}`, $set: { last: i } }, at(1)),
      ev(team, 'buy', user, { $set_once: { first_buy: i } }, at(2)),
      ev(team, '$create_alias', user, { alias }, at(3)),
      ev(team, '$pageview', alias, { $set: { via_alias: i } }, at(4)),
    ]
  })
}

const ALL_IDS = Array.from({ length: 12 }, (_, i) => [`anon-${i}`, `user-${i % 4}`, `alias-${i % 5}`]).flat()

/** The team's views with person ids named after the distinct id they were derived from. */
async function views(team: number) {
  const names = new Map(ALL_IDS.map((d) => [uuidv5(`${team}:${d}`, PERSON_NAMESPACE), d]))
  const name = (id: string) => names.get(id) ?? id
  const rows = await eventPersons(ch, team)
  // Event uuids differ between the two teams: the creating event is named by its position.
  const position = new Map(rows.map((e, i) => [e.uuid, i]))
  const events = rows.map((e) => [e.event, e.distinct_id, name(e.stamped), name(e.person)])
  const people = (await persons(ch, team))
    .filter((p) => p.is_deleted === 0)
    .map((p) => {
      const creator = position.get(String(p.properties.$creator_event_uuid))
      return [name(p.id), { ...p.properties, $creator_event_uuid: creator }, p.is_identified]
    })
    .sort((a, b) => String(a[0]).localeCompare(String(b[0])))
  const ids = Object.entries(await distinctIds(ch, team))
    .map(([d, p]) => [d, name(p)])
    .sort((a, b) => a[0]!.localeCompare(b[0]!))
  return { events, people, ids }
}

async function project(team: number, extra: Parameters<typeof runProjector>[3]) {
  for (const c of chunks(team)) await log.publish('live', c)
  const p = await runProjector(log, ch, team, { lanes: ['live'], batchSize: 2, maxWaitMs: 20, ...extra })
  try {
    await waitIdle(log, p, 30_000)
  } finally {
    await p.stop()
  }
  return { views: await views(team), decidedAhead: p.consumers.get('live')!.decidedAhead }
}

describe('pipelined projection', () => {
  it('gives the views of one batch at a time, also with a failed batch and with per-key reads', async () => {
    const sequential = await project((await createTestProject('pipeline off')).id, { pipelineDepth: 0 })
    let inserts = 0
    const pipelined = await project((await createTestProject('pipeline on')).id, {
      pipelineDepth: 1,
      writer: writerWithFault(ch, () => {
        // The third batch's rows are written, then it fails: the batches in flight are given back.
        if (++inserts === 3) throw new Error('injected failure after insert')
      }),
    })
    // The same with every identity key read on its own (no whole-team loading): reads may now
    // overlap commits, and must never cache a value older than the commit that just landed.
    let failed = false
    const perKey = await project((await createTestProject('pipeline per key')).id, {
      pipelineDepth: 1,
      identity: { teamLoadMax: 0 },
      writer: writerWithFault(ch, ({ batch }) => {
        if (!failed && batch % 4 === 0) {
          failed = true
          throw new Error('injected failure after insert')
        }
      }),
    })
    expect(failed).toBe(true)
    expect(perKey.views).toEqual(sequential.views)
    expect(inserts).toBeGreaterThan(3)
    expect(sequential.decidedAhead).toBe(0)
    expect(pipelined.decidedAhead).toBeGreaterThan(0)
    expect(sequential.views.events).toHaveLength(60)
    expect(pipelined.views).toEqual(sequential.views)
  })

  it('cuts a batch at batchBytes of message data before batchSize messages', async () => {
    const sequential = await project((await createTestProject('bytes: by count')).id, { pipelineDepth: 0 })
    // Each of the 12 chunks is a few hundred bytes: a 1-byte bound makes every message a batch of
    // its own, although up to 100 messages would fit by count.
    let writes = 0
    const byBytes = await project((await createTestProject('bytes: by size')).id, {
      batchSize: 100,
      batchBytes: 1,
      writer: writerWithFault(ch, () => {
        writes++
      }),
    })
    expect(writes).toBe(12)
    expect(byBytes.views).toEqual(sequential.views)
  })
})

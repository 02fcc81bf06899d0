import { AckPolicy, DeliverPolicy, jetstream } from '@nats-io/jetstream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DLQ_STREAM } from '../../../schema/jetstream.ts'
import { DLQ_HEADERS } from '../../../src/projectors/dead-letters.ts'
import type { RunningProjector } from '../../../src/projectors/index.ts'
import { clickhouse, createTestProject, nats } from '../../harness/index.ts'
import { ev, rows, runProjector, type TestLog, testLog, waitIdle } from './helpers.ts'

const ch = clickhouse()
let log: TestLog
let team: number
let projector: RunningProjector

beforeAll(async () => {
  log = await testLog(await nats())
  team = (await createTestProject('dead letters')).id
  projector = await runProjector(log, ch, team)
})
afterAll(async () => {
  await projector?.stop()
})

async function deadLetters(subject: string, n: number) {
  const js = jetstream(log.nc)
  // nats-server 2.9 knows only a single filter_subject: an ephemeral consumer of our own
  const jsm = await js.jetstreamManager()
  const info = await jsm.consumers.add(DLQ_STREAM, {
    filter_subject: subject,
    deliver_policy: DeliverPolicy.All,
    ack_policy: AckPolicy.None,
    inactive_threshold: 30e9,
  })
  const consumer = await js.consumers.get(DLQ_STREAM, info.name)
  const out: { headers: Record<string, string>; data: string }[] = []
  for (let i = 0; i < n; i++) {
    const m = await consumer.next({ expires: 5000 })
    if (!m) break
    const h: Record<string, string> = {}
    for (const k of Object.values(DLQ_HEADERS)) {
      const v = m.headers?.get(k)
      if (v) h[k] = v
    }
    out.push({ headers: h, data: m.string() })
  }
  return out
}

describe('dead letters', () => {
  it('sends undecodable and invalid messages and events to the dead-letter subject and moves on', async () => {
    const badJson = await log.publishRaw('live', 'not json {')
    const badEnvelope = await log.publishRaw(
      'live',
      // a version this release does not know (1 and 2 are read)
      JSON.stringify({ v: 99, team_id: team, lane: 'live', events: [] }),
    )
    const good1 = ev(team, 'good', 'dl-1')
    const good2 = ev(team, 'good', 'dl-2')
    const noUuid = { ...ev(team, 'bad', 'dl-3'), uuid: 'nope' }
    const mixed = await log.publish('live', [good1, noUuid as never, good2])
    const after = ev(team, 'after', 'dl-4')
    await log.publish('live', [after])
    await waitIdle(log, projector)

    const written = await rows<{ event: string; _offset: number }>(
      ch,
      `SELECT event, _offset FROM events WHERE team_id = ${team} ORDER BY _seq, _offset`,
    )
    expect(written).toEqual([
      { event: 'good', _offset: 0 },
      { event: 'good', _offset: 2 },
      { event: 'after', _offset: 0 },
    ])

    const dl = await deadLetters(log.dlqSubject, 3)
    expect(dl).toHaveLength(3)
    expect(dl[0]!.headers[DLQ_HEADERS.seq]).toBe(String(badJson))
    expect(dl[0]!.headers[DLQ_HEADERS.reason]).toMatch(/^undecodable/)
    expect(dl[0]!.data).toBe('not json {')
    expect(dl[1]!.headers[DLQ_HEADERS.seq]).toBe(String(badEnvelope))
    expect(dl[1]!.headers[DLQ_HEADERS.reason]).toMatch(/^invalid chunk: v/)
    expect(dl[2]!.headers[DLQ_HEADERS.seq]).toBe(String(mixed))
    expect(dl[2]!.headers[DLQ_HEADERS.offset]).toBe('1')
    expect(dl[2]!.headers[DLQ_HEADERS.reason]).toMatch(/^invalid event: uuid/)
    expect(JSON.parse(dl[2]!.data).uuid).toBe('nope')
  })
})

import { describe, expect, it } from 'vitest'
import { GroupCommit, type SerializedEvent } from '../../../src/capture/group-commit.ts'
import {
  chunkMessageId,
  type EventChunk,
  EventChunkSchema,
  parseLogMessage,
} from '../../../src/jetstream/messages.ts'

interface Sent {
  subject: string
  text: string
  body: { v: number; team_id: number; lane: string; events: { uuid: string }[] }
  msgId: string
  ack(): void
  fail(err: Error): void
}

/** A fake log: records each message and lets the test decide when (and whether) it is acked. */
function fakeLog() {
  const sent: Sent[] = []
  const send = (subject: string, payload: Uint8Array, msgId: string) =>
    new Promise<{ duplicate: boolean }>((resolve, reject) => {
      sent.push({
        subject,
        text: new TextDecoder().decode(payload),
        body: (parseLogMessage(payload) as { envelope: Sent['body'] }).envelope,
        msgId,
        ack: () => resolve({ duplicate: false }),
        fail: reject,
      })
    })
  return { sent, send }
}

const ev = (n: number): SerializedEvent => {
  const uuid = `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`
  const json = JSON.stringify({ uuid, event: 'e', n })
  return { uuid, json, size: json.length + 1 }
}

const turn = () => new Promise((r) => setImmediate(r))
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Tracks whether a promise settled, without awaiting it. */
function track(p: Promise<void>) {
  const t = { done: false, error: undefined as unknown }
  p.then(
    () => (t.done = true),
    (e: unknown) => (t.error = e),
  )
  return t
}

const opts = { maxEvents: 1000, maxBytes: 1 << 20, maxInFlight: 1, maxWaitMs: 50, unackedTtlMs: 60_000 }

describe('group commit', () => {
  it('writes requests arriving together as one message and answers none before its ack', async () => {
    const log = fakeLog()
    const gc = new GroupCommit(log.send, opts)
    const reqs = [0, 1, 2].map((i) => track(gc.add(7, 'live', 'events.live.1', [ev(i)])))
    await turn()
    expect(log.sent).toHaveLength(1)
    expect(log.sent[0]!.subject).toBe('events.live.1')
    expect(log.sent[0]!.body.events.map((e) => e.uuid)).toEqual([ev(0).uuid, ev(1).uuid, ev(2).uuid])
    await sleep(5)
    expect(reqs.some((r) => r.done)).toBe(false)
    log.sent[0]!.ack()
    await turn()
    expect(reqs.every((r) => r.done)).toBe(true)
  })

  it('keeps the log format: a chunk of the current version with the id capture always used', async () => {
    const log = fakeLog()
    const gc = new GroupCommit(log.send, opts)
    const done = gc.add(7, 'historical', 'events.historical.0', [ev(1), ev(2)])
    await turn()
    // version 3: the envelope on the first line, then one event per line
    expect(log.sent[0]!.text).toBe(
      '{"v":3,"team_id":7,"lane":"historical"}\n' +
        `{"uuid":"${ev(1).uuid}","event":"e","n":1}\n` +
        `{"uuid":"${ev(2).uuid}","event":"e","n":2}`,
    )
    const body = log.sent[0]!.body
    expect(body).toMatchObject({ v: 3, team_id: 7, lane: 'historical' })
    const chunk: EventChunk = {
      v: 3,
      team_id: 7,
      lane: 'historical',
      events: body.events.map((e) => ({
        uuid: e.uuid,
        event: 'e',
        distinct_id: 'd',
        properties: {},
        timestamp: '2026-01-01T00:00:00.000Z',
        now: '2026-01-01T00:00:00.000Z',
        sent_at: null,
        ip: null,
        team_id: 7,
      })),
    }
    expect(EventChunkSchema.safeParse(chunk).success).toBe(true)
    expect(log.sent[0]!.msgId).toBe(chunkMessageId(chunk))
    log.sent[0]!.ack()
    await done
  })

  it('lets requests wait for an in-flight ack and then sends them together', async () => {
    const log = fakeLog()
    const gc = new GroupCommit(log.send, opts)
    const first = track(gc.add(1, 'live', 's', [ev(0)]))
    await turn()
    const later = [1, 2, 3].map((i) => track(gc.add(1, 'live', 's', [ev(i)])))
    await turn()
    expect(log.sent).toHaveLength(1) // at maxInFlight: the others wait for company
    log.sent[0]!.ack()
    await turn()
    await turn()
    expect(first.done).toBe(true)
    expect(later.some((r) => r.done)).toBe(false)
    expect(log.sent).toHaveLength(2)
    expect(log.sent[1]!.body.events).toHaveLength(3)
    log.sent[1]!.ack()
    await turn()
    expect(later.every((r) => r.done)).toBe(true)
  })

  it('sends a waiting group after maxWaitMs even if the in-flight message is never acked', async () => {
    const log = fakeLog()
    const gc = new GroupCommit(log.send, { ...opts, maxWaitMs: 20 })
    void gc.add(1, 'live', 's', [ev(0)]).catch(() => {})
    await turn()
    void gc.add(1, 'live', 's', [ev(1)])
    await turn()
    expect(log.sent).toHaveLength(1)
    await sleep(40)
    expect(log.sent).toHaveLength(2)
  })

  it('fails every request of a failed message, and only those', async () => {
    const log = fakeLog()
    const gc = new GroupCommit(log.send, { ...opts, maxInFlight: 5 })
    const a = track(gc.add(1, 'live', 's', [ev(0)]))
    const b = track(gc.add(1, 'live', 's', [ev(1)]))
    const other = track(gc.add(2, 'live', 's', [ev(2)]))
    await turn()
    expect(log.sent).toHaveLength(2) // another team: another message
    log.sent[0]!.fail(new Error('no ack'))
    log.sent[1]!.ack()
    await turn()
    expect((a.error as Error).message).toBe('no ack')
    expect((b.error as Error).message).toBe('no ack')
    expect(other.done).toBe(true)
  })

  it('sends a failed message again, same bytes and id, when its requests are resent', async () => {
    // Two clients' requests shared a message whose ack never came (it may be stored all the same).
    // Each client resends its own request; grouped anew they would make a message with another id
    // that JetStream could not recognise as the same events.
    const log = fakeLog()
    const gc = new GroupCommit(log.send, { ...opts, maxInFlight: 5 })
    const a = track(gc.add(1, 'live', 's', [ev(0), ev(1)]))
    const b = track(gc.add(1, 'live', 's', [ev(2)]))
    await turn()
    expect(log.sent).toHaveLength(1)
    log.sent[0]!.fail(new Error('no ack'))
    await turn()
    expect(a.error).toBeDefined()
    expect(b.error).toBeDefined()

    // resent at the same time, with a new request between them
    const a2 = track(gc.add(1, 'live', 's', [ev(0), ev(1)]))
    const fresh = track(gc.add(1, 'live', 's', [ev(3)]))
    const b2 = track(gc.add(1, 'live', 's', [ev(2)]))
    await turn()
    const again = log.sent.filter((m) => m.msgId === log.sent[0]!.msgId)
    expect(again).toHaveLength(2) // the original and one shared resend
    expect(again[1]!.body).toEqual(log.sent[0]!.body)
    const others = log.sent.filter((m) => m.msgId !== log.sent[0]!.msgId)
    expect(others.map((m) => m.body.events.map((e) => e.uuid))).toEqual([[ev(3).uuid]])
    again[1]!.ack()
    others[0]!.ack()
    await turn()
    expect([a2.done, b2.done, fresh.done]).toEqual([true, true, true])

    // another team's request with the same uuids is its own message
    void gc.add(2, 'live', 's', [ev(0), ev(1)])
    await turn()
    expect(log.sent.at(-1)!.body.team_id).toBe(2)

    // a request with an event the failed message did not hold is grouped as usual
    const mixed = track(gc.add(1, 'live', 's', [ev(2), ev(9)]))
    await turn()
    expect(log.sent.at(-1)!.msgId).not.toBe(log.sent[0]!.msgId)
    log.sent.at(-1)!.ack()
    await turn()
    expect(mixed.done).toBe(true)
  })

  it('forgets a failed message after unackedTtlMs (past the log duplicate window)', async () => {
    const log = fakeLog()
    const gc = new GroupCommit(log.send, { ...opts, unackedTtlMs: 10 })
    void gc.add(1, 'live', 's', [ev(0)]).catch(() => {})
    await turn()
    log.sent[0]!.fail(new Error('no ack'))
    await sleep(30)
    void gc.add(1, 'live', 's', [ev(0), ev(1)])
    void gc.add(1, 'live', 's', [ev(0)])
    await turn()
    // grouped anew: one new message with both requests
    expect(log.sent).toHaveLength(2)
    expect(log.sent[1]!.body.events).toHaveLength(3)
  })

  it('never splits a request, and starts a new message when one would exceed maxEvents', async () => {
    const log = fakeLog()
    const gc = new GroupCommit(log.send, { ...opts, maxEvents: 4, maxInFlight: 5 })
    void gc.add(1, 'live', 's', [ev(0), ev(1), ev(2)])
    void gc.add(1, 'live', 's', [ev(3), ev(4)])
    await turn()
    expect(log.sent.map((m) => m.body.events.length)).toEqual([3, 2])
  })
})

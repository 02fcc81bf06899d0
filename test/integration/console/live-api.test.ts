// The console's live endpoints over HTTP: the key checks every project route has, exact counts of
// captured and projected events, a refused event attributed to its project, and the tail stream.
import { jetstream } from '@nats-io/jetstream'
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventsSubject } from '../../../schema/jetstream.ts'
import type { Project } from '../../../src/accounts/documents.ts'
import type { NatsConnection } from '../../../src/jetstream/connection.ts'
import { partitionOf } from '../../../src/jetstream/messages.ts'
import { api, createTestKey, createTestProject, nats, startTestBurrow } from '../../harness/index.ts'
import type { RunningBurrow } from '../../../src/runtime/start.ts'

let burrow: RunningBurrow
let project: Project
let other: Project
let nc: NatsConnection
let call: ReturnType<typeof api>

beforeAll(async () => {
  burrow = await startTestBurrow({ API_RATE_LIMIT_PER_MINUTE: '100000' })
  project = await createTestProject('live api')
  other = await createTestProject('live api, other')
  nc = await nats()
  call = api(burrow.url, await createTestKey(['query:read'], [project.id]))
})

afterAll(async () => {
  await burrow?.stop()
})

const stats = (p = project.id, c = call) => c('GET', `/api/projects/${p}/live/stats/`)

async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const v = await read()
    if (ok(v) || Date.now() > deadline) return v
    await new Promise((r) => setTimeout(r, 200))
  }
}

describe('live endpoints', () => {
  it('check the key: 401 without one, 403 without query:read, 404 for a project out of reach', async () => {
    expect((await stats(project.id, api(burrow.url, null))).status).toBe(401)
    const noScope = api(burrow.url, await createTestKey(['person:read'], [project.id]))
    const refused = await stats(project.id, noScope)
    expect(refused.status).toBe(403)
    expect(refused.body.detail).toContain('query:read')
    expect((await stats(other.id)).status).toBe(404)
    expect((await call('GET', `/api/environments/${other.id}/live/events/`)).status).toBe(404)
  })

  it('count captured and projected events of the project, and its refused events', async () => {
    const before = (await stats()).body
    expect(before.totals).toEqual({ captured: 0, projected: 0 })
    const res = await fetch(`${burrow.url}/batch/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        api_key: project.api_token,
        batch: [1, 2, 3, 4].map((i) => ({ event: 'live api', distinct_id: `u${i}` })),
      }),
    })
    expect(res.status).toBe(200)
    // Another project's events never count here.
    await fetch(`${burrow.url}/batch/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: other.api_token, batch: [{ event: 'elsewhere', distinct_id: 'x' }] }),
    })
    const s = (await until(stats, (r) => r.body.totals.projected === 4)).body
    expect(s.totals).toEqual({ captured: 4, projected: 4 })
    expect(s.series.captured.reduce((a: number, b: number) => a + b, 0)).toBe(4)
    expect(s.series.captured).toHaveLength(s.window_seconds)
    expect(s.subjects).toEqual([
      {
        subject: eventsSubject('live', partitionOf(project.id, 4)),
        lane: 'live',
        partition: partitionOf(project.id, 4),
        unprojected_events: 0,
      },
    ])
    // the whole log's figures (every project's traffic moves them) are for operators, at /metrics
    expect(s).not.toHaveProperty('consumers')
    expect(s).not.toHaveProperty('untracked_messages')

    // A log message holding one good event and one that claims another project: the projector writes
    // the first and dead-letters the second, which belongs to this project (the message's). Both are
    // well-formed log entries: the log is shared with other test files, which read every message.
    const now = new Date().toISOString()
    const good = {
      uuid: randomUUID(),
      event: 'good',
      distinct_id: 'd',
      properties: {},
      timestamp: now,
      now,
      sent_at: null,
      ip: null,
      team_id: project.id,
    }
    const bad = { ...good, uuid: randomUUID(), event: 'broken', team_id: other.id }
    const ack = await jetstream(nc).publish(
      eventsSubject('live', partitionOf(project.id, 4)),
      JSON.stringify({ v: 1, team_id: project.id, lane: 'live', events: [good, bad] }),
      { msgID: randomUUID() },
    )
    const after = (
      await until(stats, (r) => r.body.dead_letters.count === 1 && r.body.totals.projected === 6)
    ).body
    expect(after.totals).toEqual({ captured: 6, projected: 6 })
    expect(after.dead_letters.count).toBe(1)
    expect(after.dead_letters.recent[0]).toMatchObject({
      source_seq: ack.seq,
      offset: 1,
      event: 'broken',
      distinct_id: 'd',
    })
    expect(after.dead_letters.recent[0].reason).toMatch(/team_id differs/)
    expect(
      (await stats(other.id, api(burrow.url, await createTestKey(['query:read'])))).body.dead_letters.count,
    ).toBe(0)
  })

  it('streams matching events and stats as server-sent events', async () => {
    const ctl = new AbortController()
    // A key is needed for the stream as for every route.
    const anonymous = await fetch(`${burrow.url}/api/projects/${project.id}/live/events/`)
    expect(anonymous.status).toBe(401)
    const key = await createTestKey(['query:read'], [project.id])
    const stream = await fetch(`${burrow.url}/api/projects/${project.id}/live/events/?event=TAIL`, {
      headers: { authorization: `Bearer ${key}` },
      signal: ctl.signal,
    })
    expect(stream.status).toBe(200)
    expect(stream.headers.get('content-type')).toBe('text/event-stream')
    const reader = stream.body!.getReader()
    let text = ''
    const read = async (until: (t: string) => boolean) => {
      while (!until(text)) {
        const { value, done } = await reader.read()
        if (done) break
        text += new TextDecoder().decode(value)
      }
    }
    await read((t) => t.includes('event: stats'))
    await fetch(`${burrow.url}/batch/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        api_key: project.api_token,
        batch: [
          { event: 'tail me', distinct_id: 'a', properties: { x: 1 } },
          { event: 'not this', distinct_id: 'b' },
        ],
      }),
    })
    await read((t) => t.includes('event: events'))
    const block = text.split('\n\n').find((b) => b.startsWith('event: events'))!
    const data = JSON.parse(block.split('\n')[1]!.slice('data: '.length))
    expect(data.skipped).toBe(0)
    expect(data.events).toHaveLength(1)
    expect(data.events[0]).toMatchObject({
      event: 'tail me',
      distinct_id: 'a',
      lane: 'live',
      truncated: false,
    })
    expect(data.events[0].properties.x).toBe(1)
    ctl.abort()
  })
})

// Session recordings end to end through Burrow: /s/ -> RECORDINGS stream -> projector -> API.
// Expected values are worked by hand from the rrweb events below, by PostHog's summary rules
// (test/unit/recordings/summary.test.ts holds PostHog's own cases).
import { randomBytes } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import { api, clickhouse, createTestKey, createTestProject, startTestBurrow } from '../../harness/index.ts'
import { insertEvents } from '../hogql/fixtures.ts'
import { eventCount, jsonl, postSnapshots, rr, until } from './helpers.ts'

let burrow: RunningBurrow
let project: Project
let call: ReturnType<typeof api>
const ch = clickhouse()
const base = () => `/api/projects/${project.id}/session_recordings/`
const A = `a-${randomBytes(4).toString('hex')}`
const B = `b-${randomBytes(4).toString('hex')}`
// a minute boundary an hour ago: A's two chunks fall in two different minutes (two blocks)
const t0 = Math.floor((Date.now() - 3_600_000) / 60_000) * 60_000

const aFirst = [
  rr.meta(t0, 'https://example.io/home'),
  rr.full(t0 + 10),
  rr.click(t0 + 1000),
  rr.click(t0 + 3000),
  rr.input(t0 + 4000),
  rr.input(t0 + 4500),
]
const aSecond = [
  rr.meta(t0 + 70_000, 'https://a-different-url.com'),
  rr.click(t0 + 80_000),
  rr.console(t0 + 80_500, 'error'),
  rr.console(t0 + 81_000, 'log'),
  rr.mutation(t0 + 110_000),
]
const bEvents = [
  rr.meta(t0 + 20_000, 'https://another-url.com'),
  rr.input(t0 + 20_000),
  rr.mutation(t0 + 2_000_000),
]

const list = async (params: Record<string, unknown> = {}) => {
  const q = new URLSearchParams(
    Object.entries(params).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
  )
  const r = await call('GET', `${base()}?${q}`)
  if (r.status !== 200) throw new Error(`list ${r.status}: ${r.text}`)
  return r.body as { results: { id: string }[]; has_next: boolean; version: number }
}
const ids = async (params: Record<string, unknown> = {}) => (await list(params)).results.map((r) => r.id)

beforeAll(async () => {
  burrow = await startTestBurrow()
  project = await createTestProject('recordings api')
  call = api(
    burrow.url,
    await createTestKey(
      [
        'session_recording:read',
        'session_recording:write',
        'session_recording_playlist:write',
        'project:write',
      ],
      [project.id],
    ),
  )
  const token = project.api_token
  expect(
    (
      await postSnapshots(burrow.url, token, [
        { session: A, window: 'wA', distinctId: 'user-a', events: aFirst },
      ])
    ).status,
  ).toBe(200)
  expect(
    (
      await postSnapshots(burrow.url, token, [
        { session: A, window: 'wA', distinctId: 'user-a', events: aSecond },
        { session: B, window: 'wB', distinctId: 'user-b', events: bEvents },
      ])
    ).status,
  ).toBe(200)
  // an analytics event of session A: the events filter, and a person for user-a
  const batch = await fetch(`${burrow.url}/batch/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      api_key: token,
      batch: [{ event: '$pageview', distinct_id: 'user-a', properties: { $session_id: A } }],
    }),
  })
  expect(batch.status).toBe(200)
  await until(
    async () => ((await ids({ date_from: '-2d' })).length === 2 ? true : undefined),
    30_000,
    'two recordings',
  )
  await until(
    async () => ((await eventCount(ch, project.id, '$pageview')) > 0 ? true : undefined),
    30_000,
    'the $pageview',
  )
})

describe('the recordings list', () => {
  it('lists sessions newest first with their summaries, in PostHog shape', async () => {
    const body = await list()
    expect(body.version).toBe(4)
    expect(body.has_next).toBe(false)
    expect(body.results.map((r) => r.id)).toEqual([B, A])
    const [b, a] = body.results
    expect(a).toMatchObject({
      id: A,
      distinct_id: 'user-a',
      recording_duration: 110,
      active_seconds: 4.5,
      inactive_seconds: 105.5,
      start_time: new Date(t0).toISOString(),
      end_time: new Date(t0 + 110_000).toISOString(),
      click_count: 3,
      keypress_count: 2,
      mouse_activity_count: 3,
      console_log_count: 1,
      console_warn_count: 0,
      console_error_count: 1,
      start_url: 'https://example.io/home',
      snapshot_source: 'web',
      snapshot_library: 'web',
      viewed: false,
      ongoing: false,
      retention_period_days: 30,
    })
    expect(b).toMatchObject({
      id: B,
      distinct_id: 'user-b',
      recording_duration: 1980,
      active_seconds: 0.001,
      click_count: 0,
      keypress_count: 1,
      start_url: 'https://another-url.com',
      person: null,
    })
  })

  it('pages with limit and offset', async () => {
    expect(await list({ limit: '1' })).toMatchObject({ results: [{ id: B }], has_next: true })
    expect(await list({ limit: '1', offset: '1' })).toMatchObject({ results: [{ id: A }], has_next: false })
    expect(await ids({ limit: '1', offset: '2' })).toEqual([])
  })

  it('filters by duration, activity, console levels and distinct id', async () => {
    const rec = (key: string, operator: string, value: unknown) => [
      { type: 'recording', key, operator, value },
    ]
    expect(await ids({ having_predicates: rec('duration', 'gt', 200) })).toEqual([B])
    expect(await ids({ having_predicates: rec('active_seconds', 'gt', '1') })).toEqual([A])
    expect(await ids({ having_predicates: rec('inactive_seconds', 'lt', 200) })).toEqual([A])
    const level = (value: string[]) => [{ key: 'level', value, operator: 'exact', type: 'log_entry' }]
    expect(await ids({ console_log_filters: level(['error']) })).toEqual([A])
    expect(await ids({ console_log_filters: level(['warn']) })).toEqual([])
    expect(await ids({ console_log_filters: level(['warn', 'error']) })).toEqual([A])
    expect(await ids({ distinct_ids: ['user-b'] })).toEqual([B])
  })

  it('filters by date range, events in the session, and person', async () => {
    expect(await ids({ date_to: new Date(t0 + 10_000).toISOString() })).toEqual([A])
    expect(await ids({ date_from: new Date(t0 + 10_000).toISOString() })).toEqual([B])
    expect(await ids({ date_from: new Date(Date.now() + 60_000).toISOString() })).toEqual([])
    expect(await ids({ events: [{ id: '$pageview', type: 'events' }] })).toEqual([A])
    expect(await ids({ events: [{ id: '$nothing', type: 'events' }] })).toEqual([])
    const r = await ch.query({
      query: `SELECT toString(argMax(person_id, version)) AS p FROM person_distinct_id
              WHERE team_id = ${project.id} AND distinct_id = 'user-a'`,
      format: 'JSONEachRow',
    })
    const person = (await r.json<{ p: string }>())[0]!.p
    expect(await ids({ person_uuid: person })).toEqual([A])
    expect(await ids({ session_ids: [A], date_from: new Date(Date.now() + 60_000).toISOString() })).toEqual([
      A,
    ])
    expect(await ids({ order: 'duration', order_direction: 'ASC' })).toEqual([A, B])
  })

  it("filter_test_accounts: sessions with an event passing the project's filters (PostHog test_top_level_event_property_test_account_filter)", async () => {
    const patch = await call('PATCH', `/api/projects/${project.id}/`, {
      test_account_filters: [{ key: 'is_internal_user', value: ['false'], operator: 'exact', type: 'event' }],
    })
    expect(patch.status, patch.text).toBe(200)
    const at = new Date(t0 + 5_000).toISOString().replace('T', ' ').slice(0, 23)
    const heartbeat = (session: string, distinctId: string, internal: boolean) => ({
      team: project.id,
      uuid: crypto.randomUUID(),
      event: 'heartbeat',
      distinctId,
      personId: crypto.randomUUID(),
      timestamp: at,
      properties: { $session_id: session, is_internal_user: internal },
      sessionId: session,
    })
    await insertEvents(ch, [heartbeat(A, 'user-a', false), heartbeat(B, 'user-b', true)])
    try {
      expect(await ids({ filter_test_accounts: true })).toEqual([A])
      expect(await ids({ filter_test_accounts: false })).toEqual([B, A])
      const beats = [{ id: 'heartbeat', type: 'events' }]
      expect(await ids({ events: beats, filter_test_accounts: true })).toEqual([A])
      expect(await ids({ events: beats })).toEqual([B, A])
      // A's $pageview does not carry is_internal_user: with the filters it matches no event
      expect(
        await ids({ events: [{ id: '$pageview', type: 'events' }], filter_test_accounts: true }),
      ).toEqual([])
    } finally {
      await call('PATCH', `/api/projects/${project.id}/`, { test_account_filters: [] })
    }
  })

  it('refuses what it cannot filter by, with a 400', async () => {
    for (const params of [
      { having_predicates: [{ type: 'recording', key: 'nope', operator: 'gt', value: 1 }] },
      { console_log_filters: [{ key: 'message', value: 'x', operator: 'icontains', type: 'log_entry' }] },
      { limit: '0' },
      { date_from: 'yesterday-ish' },
      { events: [{ id: '$pageview', type: 'events', properties: [{ key: 'a', value: 1 }] }] },
    ]) {
      const q = new URLSearchParams(
        Object.entries(params).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
      )
      const r = await call('GET', `${base()}?${q}`)
      expect(r.status, JSON.stringify(params)).toBe(400)
      expect(r.body.type).toBe('validation_error')
    }
  })
})

describe('one recording', () => {
  it('retrieves it with its person', async () => {
    const r = await call('GET', `${base()}${A}/`)
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ id: A, recording_duration: 110, distinct_id: 'user-a' })
    expect(r.body.person.distinct_ids).toEqual(['user-a'])
    expect((await call('GET', `${base()}nope/`)).status).toBe(404)
  })

  it('lists its sources (one block per minute) and returns each block as [window_id, event] lines in order', async () => {
    const s = await call('GET', `${base()}${A}/snapshots/`)
    expect(s.status).toBe(200)
    expect(s.body).toEqual({
      sources: [
        {
          source: 'blob_v2',
          start_timestamp: new Date(t0).toISOString(),
          end_timestamp: new Date(t0 + 4500).toISOString(),
          blob_key: '0',
        },
        {
          source: 'blob_v2',
          start_timestamp: new Date(t0 + 70_000).toISOString(),
          end_timestamp: new Date(t0 + 110_000).toISOString(),
          blob_key: '1',
        },
      ],
    })
    const both = await call('GET', `${base()}${A}/snapshots/?source=blob_v2&start_blob_key=0&end_blob_key=1`)
    expect(both.status).toBe(200)
    expect(both.headers.get('content-type')).toContain('application/jsonl')
    expect(jsonl(both.text)).toEqual([...aFirst, ...aSecond].map((e) => ['wA', e]))
    const first = await call('GET', `${base()}${A}/snapshots/?source=blob_v2&start_blob_key=1&end_blob_key=1`)
    expect(jsonl(first.text)).toEqual(aSecond.map((e) => ['wA', e]))
    expect(
      (await call('GET', `${base()}${A}/snapshots/?source=blob_v2&start_blob_key=0&end_blob_key=2`)).status,
    ).toBe(404)
    expect(
      (await call('GET', `${base()}${A}/snapshots/?source=blob_v2&start_blob_key=0&end_blob_key=21`)).status,
    ).toBe(400)
    expect((await call('GET', `${base()}${A}/snapshots/?source=blob_v2`)).status).toBe(400)
    expect((await call('GET', `${base()}${A}/snapshots/?source=realtime`)).status).toBe(400)
    expect((await call('GET', `${base()}nope/snapshots/`)).status).toBe(404)
  })

  it('tracks viewed per user', async () => {
    expect((await call('GET', `${base()}${A}/viewed/`)).body).toEqual({ viewed: false, other_viewers: 0 })
    const patch = await call('PATCH', `${base()}${A}/`, { viewed: true })
    expect(patch.status).toBe(200)
    expect(patch.body).toEqual({ success: true })
    expect((await call('GET', `${base()}${A}/viewed/`)).body).toEqual({ viewed: true, other_viewers: 0 })
    expect((await call('GET', `${base()}${A}/`)).body.viewed).toBe(true)
    expect((await list()).results.map((r) => [r.id, (r as unknown as { viewed: boolean }).viewed])).toEqual([
      [B, false],
      [A, true],
    ])
    expect((await call('PATCH', `${base()}${A}/`, {})).status).toBe(400)
    expect((await call('PATCH', `${base()}nope/`, { viewed: true })).status).toBe(404)
  })

  it('is listed in a playlist that holds it, with the watched count', async () => {
    const pl = await call('POST', `/api/projects/${project.id}/session_recording_playlists/`, { name: 'p' })
    const short = pl.body.short_id
    await call('POST', `/api/projects/${project.id}/session_recording_playlists/${short}/recordings/${A}/`)
    expect(await ids({ playlist: short })).toEqual([A])
    const held = await call(
      'GET',
      `/api/projects/${project.id}/session_recording_playlists/${short}/recordings/`,
    )
    expect(held.body.results).toHaveLength(1)
    expect(held.body.results[0]).toMatchObject({
      id: A,
      recording_duration: 110,
      click_count: 3,
      viewed: true,
    })
    expect(held.body.results[0].added_at).toEqual(expect.any(String))
    // a recording in a playlist is kept whatever its age
    expect(held.body.results[0]).toMatchObject({ retention_period_days: null, expiry_time: null })
    const got = await call('GET', `/api/projects/${project.id}/session_recording_playlists/${short}/`)
    expect(got.body.recordings_counts).toEqual({ collection: { count: 1, watched_count: 1 } })
  })
})

describe('capture of snapshots', () => {
  it('never writes $snapshot rows to events', async () => {
    expect(await eventCount(ch, project.id, '$snapshot')).toBe(0)
  })

  it('answers 401 for an unknown token, 400 for a corrupt body, 200 (dropped) for items that are not snapshots', async () => {
    expect(
      (
        await postSnapshots(burrow.url, 'phc_nope', [
          { session: 'x', window: 'w', distinctId: 'd', events: [rr.full(1)] },
        ])
      ).status,
    ).toBe(401)
    const bad = await fetch(`${burrow.url}/s/`, {
      method: 'POST',
      body: Buffer.from([0x1f, 0x8b, 0x08, 0, 1, 2]),
    })
    expect(bad.status).toBe(400)
    const notSnap = await fetch(`${burrow.url}/s/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: project.api_token, event: 'hello', distinct_id: 'x' }),
    })
    expect(notSnap.status).toBe(200)
  })

  it('accepts a body of up to 25 MB and gives the snapshot back whole; refuses a larger one with 413', async () => {
    const session = `big-${randomBytes(4).toString('hex')}`
    const t = Date.now() - 60_000
    // about 20 MB of incompressible text in one full snapshot: many NATS-sized fragments
    const big = {
      ...rr.full(t),
      data: { node: { type: 0, id: 1, childNodes: [] }, blob: randomBytes(15_000_000).toString('base64') },
    }
    const body = JSON.stringify([
      {
        event: '$snapshot',
        properties: {
          $session_id: session,
          $window_id: 'w',
          $snapshot_data: [big],
          distinct_id: 'd',
          token: project.api_token,
        },
      },
    ])
    expect(body.length).toBeGreaterThan(20_000_000)
    // A 503 says the log did not acknowledge in time (this machine's other lanes can starve it): a
    // client sends again, as posthog-js does; the fragments' ids are content hashes, so a resend
    // adds nothing twice.
    let ok = new Response(null, { status: 503 })
    for (let attempt = 0; attempt < 3 && ok.status === 503; attempt++) {
      ok = await fetch(`${burrow.url}/s/`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body,
      })
    }
    expect(ok.status).toBe(200)
    // the summary lands with the first fragment; the data once every fragment is in
    const blob = await until(
      async () => {
        const r = await call(
          'GET',
          `${base()}${session}/snapshots/?source=blob_v2&start_blob_key=0&end_blob_key=0`,
        )
        return r.status === 200 && r.text.length > 0 ? r : undefined
      },
      // a hang guard, not a speed check: 20 MB through the recordings projector took over 30 s on
      // chdb with the other lanes running
      90_000,
      'the big recording',
    )
    expect(jsonl(blob.text)).toEqual([['w', big]])
    const tooBig = await fetch(`${burrow.url}/s/`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: Buffer.alloc(26 * 1024 * 1024, 0x20),
    })
    expect(tooBig.status).toBe(413)
  })
})

describe('deleting a recording', () => {
  it('hides it at once, removes its data, and ignores later snapshots of it', async () => {
    const reader = api(burrow.url, await createTestKey(['session_recording:read'], [project.id]))
    expect((await reader('DELETE', `${base()}${B}/`)).status).toBe(403)
    expect((await reader('PATCH', `${base()}${B}/`, { viewed: true })).status).toBe(403)
    expect(
      (await api(burrow.url, await createTestKey(['query:read'], [project.id]))('GET', base())).status,
    ).toBe(403)

    const del = await call('DELETE', `${base()}${B}/`)
    expect(del.status).toBe(204)
    expect((await call('GET', `${base()}${B}/`)).status).toBe(404)
    expect((await call('GET', `${base()}${B}/snapshots/`)).status).toBe(404)
    expect(await ids()).toContain(A)
    expect(await ids()).not.toContain(B)
    expect((await call('DELETE', `${base()}${B}/`)).status).toBe(404)

    // a late chunk of B, then one of a new session C: once C is listed, B's chunk was seen and ignored
    const C = `c-${randomBytes(4).toString('hex')}`
    const now = Date.now() - 1000
    await postSnapshots(burrow.url, project.api_token, [
      { session: B, window: 'wB', distinctId: 'user-b', events: [rr.full(now)] },
    ])
    await postSnapshots(burrow.url, project.api_token, [
      { session: C, window: 'wC', distinctId: 'user-c', events: [rr.full(now)] },
    ])
    await until(async () => ((await ids()).includes(C) ? true : undefined), 30_000, 'session C')
    expect((await ids()).includes(B)).toBe(false)
  })
})

// A generated recording of 10 minutes of activity, sent as posthog-js sends it (a request every
// 2 s), is listed with its totals and comes back whole. The time to list it and fetch its
// snapshots is printed (a figure, not asserted; bench/replay.ts measures it too).
import { randomBytes } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import { api, createTestKey, createTestProject, startTestBurrow } from '../../harness/index.ts'
import { generatedSession, jsonl, postSnapshots, until } from './helpers.ts'

let burrow: RunningBurrow
let project: Project
let call: ReturnType<typeof api>

beforeAll(async () => {
  burrow = await startTestBurrow()
  project = await createTestProject('long recording')
  call = api(burrow.url, await createTestKey(['session_recording:read'], [project.id]))
})

describe('a 10-minute recording', () => {
  it('is listed with its totals and its snapshots come back whole, in order', async () => {
    const session = `long-${randomBytes(4).toString('hex')}`
    const t0 = Math.floor((Date.now() - 2 * 3_600_000) / 60_000) * 60_000
    const g = generatedSession(t0, 10)
    for (const events of g.requests) {
      const r = await postSnapshots(burrow.url, project.api_token, [
        { session, window: 'w', distinctId: 'u', events },
      ])
      expect(r.status).toBe(200)
    }
    const base = `/api/projects/${project.id}/session_recordings/`
    await until(
      async () => {
        // every chunk projected: the last chunks may hold no click, so the click count alone is not enough
        const r = await call('GET', `${base}${session}/`)
        const totals =
          r.status === 200 &&
          r.body.click_count === g.clicks &&
          r.body.keypress_count === g.keys &&
          r.body.console_log_count === 20 &&
          r.body.recording_duration === 599
        if (!totals) return undefined
        const s = await call('GET', `${base}${session}/snapshots/`)
        return s.body?.sources?.length === 10 ? true : undefined
      },
      60_000,
      'the whole recording',
    )

    const started = performance.now()
    const listed = await call('GET', `${base}?date_from=-1d&limit=10`)
    const t1 = performance.now()
    const sources = await call('GET', `${base}${session}/snapshots/`)
    const t2 = performance.now()
    const n = sources.body.sources.length
    const blob = await call(
      'GET',
      `${base}${session}/snapshots/?source=blob_v2&start_blob_key=0&end_blob_key=${n - 1}`,
    )
    const ms = performance.now() - started
    console.log(
      `10-minute recording (${g.events} events, ${(blob.text.length / 1e6).toFixed(1)} MB of JSON lines): ` +
        `listed and fetched in ${ms.toFixed(0)} ms (list ${(t1 - started).toFixed(0)}, sources ${(t2 - t1).toFixed(0)}, ` +
        `blocks ${(ms - (t2 - started)).toFixed(0)})`,
    )

    const rec = listed.body.results.find((r: { id: string }) => r.id === session)
    expect(rec).toMatchObject({
      recording_duration: 599,
      click_count: g.clicks,
      keypress_count: g.keys,
      console_log_count: 20,
      start_url: 'https://shop.example/checkout',
    })
    expect(n).toBe(10)
    const events = jsonl(blob.text).map(([, e]) => e)
    expect(events).toHaveLength(g.events)
    expect(events[1]!.type).toBe(2)
    const times = events.map((e) => e.timestamp)
    expect(times).toEqual([...times].sort((a, b) => a - b))
  })
})

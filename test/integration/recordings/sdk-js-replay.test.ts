// posthog-js in Debian's Chromium, session replay on: it records a page with clicks and typing and
// posts the snapshots to /s/; the recording is listed with a plausible summary and plays back.
//
// posthog-js records only when its remote config has a `sessionRecording` object: the test switches
// recording on in the project's settings and the SDK finds it in the config Burrow serves.
import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { gunzipSync } from 'node:zlib'
import { chromium } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import { api, clickhouse, createTestKey, createTestProject, startTestBurrow } from '../../harness/index.ts'
import { eventCount, jsonl, until } from './helpers.ts'

const require = createRequire(import.meta.url)
const CHROMIUM = '/usr/bin/chromium'

let burrow: RunningBurrow
let project: Project
let page: Server
let call: ReturnType<typeof api>
const ch = clickhouse()

beforeAll(async () => {
  burrow = await startTestBurrow()
  project = await createTestProject('posthog-js replay')
  call = api(burrow.url, await createTestKey(['session_recording:read', 'project:write'], [project.id]))
  // Recording is switched on the way a user does it: in the project's settings, which reach
  // posthog-js through the remote config Burrow serves (/array/<token>/config.js).
  const settings = await call('PATCH', `/api/projects/${project.id}/`, {
    session_recording_opt_in: true,
    capture_console_log_opt_in: true,
    autocapture_opt_out: true,
  })
  expect(settings.status, settings.text).toBe(200)
  const bundle = readFileSync(require.resolve('posthog-js/dist/array.full.js'))
  const html = `<!doctype html><html><head><title>replay test</title>
<script src="/posthog.js"></script>
<script>
  posthog.init(${JSON.stringify(project.api_token)}, {
    api_host: ${JSON.stringify(burrow.url)},
    loaded: function () { window.__loaded = true },
  })
</script></head><body>
<h1>checkout</h1>
<button id="go" onclick="document.getElementById('out').textContent = 'clicked ' + Date.now()">go</button>
<input id="name" type="text" />
<p id="out"></p>
</body></html>`
  page = createServer((req, res) => {
    if (req.url === '/posthog.js') {
      res.writeHead(200, { 'content-type': 'application/javascript' })
      res.end(bundle)
    } else {
      res.writeHead(200, { 'content-type': 'text/html' })
      res.end(html)
    }
  })
  await new Promise<void>((r) => page.listen(0, '127.0.0.1', r))
})

afterAll(() => new Promise<void>((r) => page.close(() => r())))

type RREvent = { type: number; timestamp: number; data: unknown; cv?: string }

/** A full snapshot's node tree, whether posthog-js sent it plain or gzipped into a string ('2024-10'). */
function snapshotTree(e: RREvent): { node?: { type: number } } {
  if (typeof e.data !== 'string') return e.data as { node?: { type: number } }
  return JSON.parse(gunzipSync(Buffer.from(e.data, 'latin1')).toString('utf8'))
}

describe('posthog-js session replay in headless Chromium', () => {
  it('records clicks and typing; the recording is listed and its snapshots play back in order', async () => {
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--disable-blink-features=AutomationControlled',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    })
    let sessionId: string
    let distinctId: string
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the API body
    let rec: any
    try {
      const tab = await browser.newPage({
        userAgent:
          'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36',
      })
      await tab.goto(`http://127.0.0.1:${(page.address() as AddressInfo).port}/`)
      await tab.waitForFunction(() => (window as unknown as { __loaded?: boolean }).__loaded === true)
      type PH = { get_session_id(): string; get_distinct_id(): string; sessionRecordingStarted(): boolean }
      await tab.waitForFunction(
        () => (window as unknown as { posthog: PH }).posthog.sessionRecordingStarted(),
        null,
        {
          timeout: 20_000,
        },
      )
      ;[sessionId, distinctId] = await tab.evaluate(() => {
        const ph = (window as unknown as { posthog: PH }).posthog
        return [ph.get_session_id(), ph.get_distinct_id()]
      })
      await tab.waitForTimeout(500)
      await tab.click('#go')
      await tab.mouse.move(50, 50)
      await tab.mouse.move(200, 120, { steps: 5 })
      await tab.click('#name')
      await tab.keyboard.type('hello burrow', { delay: 40 })
      await tab.click('#go')
      await tab.waitForTimeout(1500)
      await tab.evaluate(() => console.error('something broke'))
      // the recorder flushes its buffer every couple of seconds; the page stays open until it has
      rec = await until(
        async () => {
          const r = await call('GET', `/api/projects/${project.id}/session_recordings/${sessionId}/`)
          return r.status === 200 && r.body.click_count >= 3 && r.body.console_error_count >= 1
            ? r.body
            : undefined
        },
        45_000,
        'the recording with its clicks',
      )
    } finally {
      await browser.close()
    }
    const listed = await call('GET', `/api/projects/${project.id}/session_recordings/`)
    expect(listed.body.results.map((r: { id: string }) => r.id)).toContain(sessionId)
    expect(rec.distinct_id).toBe(distinctId)
    expect(rec.start_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/)
    // the recorded events span at least the 0.5 s and 1.5 s waits between them
    expect(rec.recording_duration).toBeGreaterThanOrEqual(2)
    expect(rec.recording_duration).toBeLessThan(60)
    expect(rec.active_seconds).toBeGreaterThan(0)
    expect(rec.active_seconds).toBeLessThanOrEqual(rec.recording_duration + 1)
    expect(rec.click_count).toBe(3) // two on the button, one into the text field
    expect(rec.keypress_count).toBeGreaterThanOrEqual(1)
    expect(rec.mouse_activity_count).toBeGreaterThanOrEqual(rec.click_count)
    expect(rec.console_error_count).toBe(1)

    const sources = await call(
      'GET',
      `/api/projects/${project.id}/session_recordings/${sessionId}/snapshots/`,
    )
    expect(sources.status).toBe(200)
    const n = sources.body.sources.length
    expect(n).toBeGreaterThanOrEqual(1)
    const blob = await call(
      'GET',
      `/api/projects/${project.id}/session_recordings/${sessionId}/snapshots/?source=blob_v2&start_blob_key=0&end_blob_key=${n - 1}`,
    )
    const lines = jsonl(blob.text) as unknown as [string, RREvent][]
    const events = lines.map(([, e]) => e)
    for (const e of events) {
      expect([0, 1, 2, 3, 4, 5, 6]).toContain(e.type)
      expect(typeof e.timestamp).toBe('number')
    }
    const firstFull = events.findIndex((e) => e.type === 2)
    const firstIncremental = events.findIndex((e) => e.type === 3)
    expect(firstFull).toBeGreaterThanOrEqual(0)
    expect(firstFull).toBeLessThan(firstIncremental)
    expect(events.findIndex((e) => e.type === 4)).toBeLessThan(firstFull)
    expect(snapshotTree(events[firstFull]!).node?.type).toBe(0) // rrweb's Document node
    const times = events.map((e) => e.timestamp)
    expect(times).toEqual([...times].sort((a, b) => a - b))
    const clicks = events.filter(
      (e) => e.type === 3 && (e.data as { source: number; type: number }).source === 2,
    )
    expect(clicks.some((e) => (e.data as { type: number }).type === 2)).toBe(true)
    expect(new Set(lines.map(([w]) => w)).size).toBe(1)

    // snapshots never become events; the analytics events of the page did arrive
    await until(
      async () => ((await eventCount(ch, project.id, '$pageview')) > 0 ? true : undefined),
      30_000,
      'the $pageview',
    )
    expect(await eventCount(ch, project.id, '$snapshot')).toBe(0)
  })
})

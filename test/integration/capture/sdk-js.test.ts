import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import type { NatsConnection } from '../../../src/jetstream/connection.ts'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import { createTestProject, nats, startTestBurrow } from '../../harness/index.ts'
import { waitForEvents } from '../../harness/log.ts'
import { humanTab, launchChromium } from '../sdk/helpers.ts'

const require = createRequire(import.meta.url)

let burrow: RunningBurrow
let project: Project
let nc: NatsConnection
let page: Server

beforeAll(async () => {
  burrow = await startTestBurrow()
  project = await createTestProject('posthog-js')
  nc = await nats()
  const bundle = readFileSync(require.resolve('posthog-js/dist/array.full.js'))
  const html = `<!doctype html><html><head><title>burrow test</title>
<script src="/posthog.js"></script>
<script>
  posthog.init(${JSON.stringify(project.api_token)}, {
    api_host: ${JSON.stringify(burrow.url)},
    autocapture: false,
    disable_session_recording: true,
    loaded: function () { window.__loaded = true },
  })
</script></head><body><h1>hello</h1></body></html>`
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

describe('posthog-js in headless Chromium pointed at Burrow', () => {
  it('delivers the $pageview it sends with its default settings', async () => {
    const browser = await launchChromium()
    try {
      const tab = await humanTab(browser)
      const url = `http://127.0.0.1:${(page.address() as AddressInfo).port}/`
      await tab.goto(url)
      await tab.waitForFunction(() => (window as unknown as { __loaded?: boolean }).__loaded === true)
      const events = await waitForEvents(nc, project.id, 1, 20_000)
      const pageview = events.find((e) => e.event === '$pageview')
      expect(pageview).toBeDefined()
      expect(pageview!.properties.$current_url).toBe(url)
      expect(pageview!.properties.$lib).toBe('web')
      expect(pageview!.distinct_id.length).toBeGreaterThan(0)
    } finally {
      await browser.close()
    }
  })
})

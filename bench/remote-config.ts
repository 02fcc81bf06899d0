// Remote config: GET /array/<token>/config and config.js (served from the per-process cache) against
// POST /flags?v=2 for the same project (the other request posthog-js makes on every page load), the
// cost of building the document per request (what the cache saves), and how long a settings
// change takes to show.
// Run: npx tsx bench/remote-config.ts   (env REQUESTS, CONCURRENCY to size it)
import { ProjectDoc } from '../src/accounts/documents.ts'
import { buildRemoteConfig } from '../src/remote-config/build.ts'
import { clientConfig, configJs } from '../src/remote-config/serve.ts'
import { benchBurrow, latencyLine, rate, runPool } from './lib.ts'

const REQUESTS = Number(process.env.REQUESTS ?? 4000)
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 16)

const burrow = await benchBurrow({ API_RATE_LIMIT_PER_MINUTE: '0' })
const { project_id: projectId, project_api_key: token, personal_api_key: key } = burrow.credentials
const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }

try {
  await fetch(`${burrow.url}/api/projects/${projectId}/`, {
    method: 'PATCH',
    headers: auth,
    body: JSON.stringify({ session_recording_opt_in: true, recording_domains: ['https://*.example.com'] }),
  })
  const get = (path: string) => async () => {
    const r = await fetch(`${burrow.url}${path}`, { headers: { origin: 'https://app.example.com' } })
    if (r.status !== 200) throw new Error(`${path}: ${r.status}`)
    await r.arrayBuffer()
  }
  const flags = async () => {
    const r = await fetch(`${burrow.url}/flags/?v=2`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token, distinct_id: 'bench-user' }),
    })
    if (r.status !== 200) throw new Error(`flags: ${r.status}`)
    await r.arrayBuffer()
  }
  const measure = async (name: string, task: () => Promise<void>) => {
    await runPool(200, CONCURRENCY, task) // warm-up
    const t0 = performance.now()
    const lat = await runPool(REQUESTS, CONCURRENCY, task)
    const ms = performance.now() - t0
    console.log(`${name.padEnd(28)} ${String(rate(REQUESTS, ms)).padStart(6)} req/s  ${latencyLine(lat)}`)
    return rate(REQUESTS, ms)
  }
  const json = await measure('GET /array/<t>/config', get(`/array/${token}/config`))
  const js = await measure('GET /array/<t>/config.js', get(`/array/${token}/config.js`))
  const base = await measure('POST /flags?v=2 (baseline)', flags)
  console.log(
    `config vs /flags: ${(json / base).toFixed(2)}x, config.js vs /flags: ${(js / base).toFixed(2)}x`,
  )

  // What the cache saves: building and serialising the document for every request.
  const project = ProjectDoc.parse({
    id: 1,
    uuid: '00000000-0000-4000-8000-000000000001',
    organization_id: '00000000-0000-4000-8000-000000000002',
    name: 'bench',
    api_token: token,
    created_at: new Date().toISOString(),
    settings: { session_recording_opt_in: true, recording_domains: ['https://*.example.com'] },
  })
  const N = 100_000
  let t0 = performance.now()
  for (let i = 0; i < N; i++) {
    const c = clientConfig(buildRemoteConfig(project, { hasFeatureFlags: true, surveys: [] }), true)
    configJs(token, c)
  }
  const buildUs = ((performance.now() - t0) * 1000) / N
  const cached = new Map([[token, 'x']])
  t0 = performance.now()
  for (let i = 0; i < N; i++) cached.get(token)
  const lookupUs = ((performance.now() - t0) * 1000) / N
  console.log(`build per request ${buildUs.toFixed(2)} µs vs cached lookup ${lookupUs.toFixed(3)} µs`)

  // A settings change reaches the served document through the KV watch.
  const changes: number[] = []
  for (let i = 0; i < 10; i++) {
    const optOut = i % 2 === 0
    const start = performance.now()
    await fetch(`${burrow.url}/api/projects/${projectId}/`, {
      method: 'PATCH',
      headers: auth,
      body: JSON.stringify({ autocapture_opt_out: optOut }),
    })
    for (;;) {
      const c = (await (await fetch(`${burrow.url}/array/${token}/config`)).json()) as {
        autocapture_opt_out: boolean
      }
      if (c.autocapture_opt_out === optOut) break
    }
    changes.push(performance.now() - start)
  }
  console.log(`PATCH to new config served: ${latencyLine(changes)} (PATCH round trip included)`)
} finally {
  await burrow.cleanup()
}

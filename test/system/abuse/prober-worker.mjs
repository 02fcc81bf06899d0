/* global fetch, performance, setTimeout */
// The prober's loop (prober.ts), in a worker thread of its own: the test's own thread parses the
// hostile requests' answers (a 60 MB one takes it seconds), which must not count as a stall of the
// server. Every 50 ms: GET /_health and one capture of the other project, each timed, until told to stop.
import { parentPort, workerData } from 'node:worker_threads'

const { base, token, periodMs } = workerData
const health = []
const capture = []
let stop = false
parentPort.on('message', () => (stop = true))

async function timed(url, init) {
  const t0 = performance.now()
  const res = await fetch(url, init)
  await res.arrayBuffer()
  if (res.status !== 200) throw new Error(`probe answered ${res.status}`)
  return performance.now() - t0
}

let n = 0
let failure = null
while (!stop) {
  const tick = performance.now()
  const body = JSON.stringify({ api_key: token, event: 'probe', distinct_id: `probe-${n++}` })
  try {
    const [h, c] = await Promise.all([
      timed(`${base}/_health`),
      timed(`${base}/e/`, { method: 'POST', body, headers: { 'content-type': 'application/json' } }),
    ])
    health.push(h)
    capture.push(c)
  } catch (err) {
    failure = String(err)
    break
  }
  const wait = periodMs - (performance.now() - tick)
  if (wait > 0) await new Promise((r) => setTimeout(r, wait))
}
parentPort.postMessage({ health, capture, failure })

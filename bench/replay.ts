// Session replay ingest: MB/s of rrweb data through /s/ (capture acked, and end to end until the
// recordings projector has it in ClickHouse), against a direct insert of the same bytes into a
// copy of session_replay_snapshots; and the time to list a 10-minute recording and fetch its
// snapshots. MB = uncompressed rrweb JSON (what posthog-js's `$snapshot_bytes` counts).
// Run: npx tsx bench/replay.ts   (env SESSIONS, MINUTES, CONCURRENCY to size it)
import { randomBytes } from 'node:crypto'
import { gzipSync } from 'node:zlib'
import { clickhouseClient } from '../src/clickhouse/client.ts'
import { snapshotMessages } from '../src/recordings/ingest.ts'
import { decodeMessage } from '../src/recordings/message.ts'
import { insertSnapshotRows, type SnapshotRow } from '../src/recordings/rows.ts'
import { dom, generatedSession, rr, snapshotBody } from '../test/integration/recordings/helpers.ts'
import { benchBurrow, runPool } from './lib.ts'

const SESSIONS = Number(process.env.SESSIONS ?? 20)
const MINUTES = Number(process.env.MINUTES ?? 10)
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 8)
/** requests of one large full snapshot each (about 1.3 MB of JSON): the bytes, not the requests, dominate */
const LARGE = Number(process.env.LARGE ?? 40)

const burrow = await benchBurrow()
const ch = clickhouseClient(burrow.clickhouseUrl, burrow.database)
const token = burrow.credentials.project_api_key
const team = burrow.credentials.project_id
const mb = (bytes: number, ms: number) => ((bytes / 1e6 / ms) * 1000).toFixed(1)

try {
  const t0 = Math.floor((Date.now() - 3 * 3_600_000) / 60_000) * 60_000
  const one = generatedSession(t0, MINUTES)
  const sessions = Array.from({ length: SESSIONS }, () => `bench-${randomBytes(6).toString('hex')}`)
  // every request as posthog-js sends it: a gzipped JSON array with one $snapshot event
  const requests = sessions.flatMap((session, s) =>
    one.requests.map((events) =>
      gzipSync(
        JSON.stringify(snapshotBody(token, [{ session, window: `w${s}`, distinctId: `u${s}`, events }])),
      ),
    ),
  )
  const rawBytes = SESSIONS * one.requests.reduce((n, r) => n + Buffer.byteLength(JSON.stringify(r)), 0)
  const sentBytes = requests.reduce((n, r) => n + r.length, 0)
  const totalEvents = SESSIONS * one.events

  const landed = async () => {
    const rs = await ch.query({
      query: `SELECT sumMerge(event_count) AS n FROM session_replay_events WHERE team_id = ${team}`,
      format: 'JSONEachRow',
    })
    return Number((await rs.json<{ n: string }>())[0]?.n ?? 0)
  }

  const start = performance.now()
  await runPool(requests.length, CONCURRENCY, async (i) => {
    const res = await fetch(`${burrow.url}/s/`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: requests[i],
    })
    if (res.status !== 200) throw new Error(`/s/: ${res.status} ${await res.text()}`)
    await res.arrayBuffer()
  })
  const ackedMs = performance.now() - start
  while ((await landed()) < totalEvents) await new Promise((r) => setTimeout(r, 50))
  const endToEndMs = performance.now() - start

  const large = Array.from({ length: LARGE }, (_, i) =>
    Buffer.from(
      JSON.stringify(
        snapshotBody(token, [
          {
            session: `large-${i}`,
            window: 'w',
            distinctId: 'u',
            events: [{ ...rr.full(t0 + i), data: dom(12_000) }],
          },
        ]),
      ),
    ),
  )
  const largeBytes = large.reduce((n, b) => n + b.length, 0)
  const largeEvents = totalEvents + LARGE
  const lStart = performance.now()
  await runPool(large.length, 4, async (i) => {
    const res = await fetch(`${burrow.url}/s/`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: gzipSync(large[i]!),
    })
    if (res.status !== 200) throw new Error(`/s/: ${res.status}`)
    await res.arrayBuffer()
  })
  const largeAckedMs = performance.now() - lStart
  while ((await landed()) < largeEvents) await new Promise((r) => setTimeout(r, 50))
  const largeEndMs = performance.now() - lStart

  // Baseline: the same snapshots gzipped into the same rows and inserted straight into a copy of the
  // table, in batches as large as the projector's, with no HTTP, no log and no projector.
  await ch.command({ query: 'CREATE TABLE IF NOT EXISTS bench_replay_direct AS session_replay_snapshots' })
  const direct = sessions.map((session, s) => ({ session, s }))
  const gzStart = performance.now()
  const rows: SnapshotRow[] = []
  let seq = 0
  for (const { session, s } of direct) {
    for (const events of one.requests) {
      const { messages } = await snapshotMessages(
        [
          {
            event: '$snapshot',
            distinct_id: `u${s}`,
            properties: { $session_id: session, $window_id: `w${s}`, $snapshot_data: events },
          },
        ],
        {
          teamId: team,
          nowMs: Date.now(),
          ip: null,
          sentAt: undefined,
          partitions: 1,
          maxMessageBytes: 1 << 20,
        },
      )
      for (const m of messages) {
        const d = decodeMessage(m.payload)
        if ('data' in d) rows.push({ header: d.header, data: d.data, seq: ++seq })
      }
    }
  }
  const gzMs = performance.now() - gzStart
  const insStart = performance.now()
  for (let i = 0; i < rows.length; i += 100)
    await insertSnapshotRows(ch, 'bench_replay_direct', rows.slice(i, i + 100))
  const insertMs = performance.now() - insStart
  await ch.command({ query: 'DROP TABLE IF EXISTS bench_replay_direct' })

  // A 10-minute recording: list it and fetch every block, as a player would.
  const headers = { authorization: `Bearer ${burrow.credentials.personal_api_key}` }
  const base = `${burrow.url}/api/projects/${team}/session_recordings/`
  const get = async (path: string) => {
    const r = await fetch(`${base}${path}`, { headers })
    if (r.status !== 200) throw new Error(`${path}: ${r.status}`)
    return r
  }
  const fetchTimes: number[] = []
  for (const session of sessions.slice(0, 5)) {
    const f0 = performance.now()
    await (await get('?date_from=-1d&limit=50')).json()
    const { sources } = (await (await get(`${session}/snapshots/`)).json()) as { sources: unknown[] }
    await (
      await get(`${session}/snapshots/?source=blob_v2&start_blob_key=0&end_blob_key=${sources.length - 1}`)
    ).text()
    fetchTimes.push(performance.now() - f0)
  }

  console.log(`session replay ingest: ${SESSIONS} sessions x ${MINUTES} min, ${requests.length} requests,`)
  console.log(
    `  ${(rawBytes / 1e6).toFixed(1)} MB of rrweb JSON (${(sentBytes / 1e6).toFixed(1)} MB gzipped on the wire), ${totalEvents} rrweb events`,
  )
  console.log(
    `  /s/ acked (in JetStream):          ${mb(rawBytes, ackedMs)} MB/s  (${ackedMs.toFixed(0)} ms)`,
  )
  console.log(
    `  end to end (queryable summaries):  ${mb(rawBytes, endToEndMs)} MB/s  (${endToEndMs.toFixed(0)} ms)`,
  )
  console.log(
    `  direct insert of the same rows:    ${mb(rawBytes, insertMs)} MB/s  (${insertMs.toFixed(0)} ms, ${rows.length} rows)`,
  )
  console.log(
    `  direct gzip + insert:              ${mb(rawBytes, gzMs + insertMs)} MB/s  (gzip ${gzMs.toFixed(0)} ms)`,
  )
  console.log(`  end to end / direct gzip + insert: ${((gzMs + insertMs) / endToEndMs).toFixed(2)}`)
  console.log(
    `large requests: ${LARGE} x ${(largeBytes / LARGE / 1e6).toFixed(2)} MB (one full snapshot each, gzipped by the client)`,
  )
  console.log(`  /s/ acked:   ${mb(largeBytes, largeAckedMs)} MB/s  (${largeAckedMs.toFixed(0)} ms)`)
  console.log(`  end to end:  ${mb(largeBytes, largeEndMs)} MB/s  (${largeEndMs.toFixed(0)} ms)`)
  console.log(
    `  10-minute recording listed and fetched whole: ${fetchTimes.map((t) => t.toFixed(0)).join(', ')} ms`,
  )
} finally {
  await ch.close()
  await burrow.cleanup()
}

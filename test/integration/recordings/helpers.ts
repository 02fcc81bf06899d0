// rrweb events and /s/ requests as posthog-js sends them, for the recordings tests.
import { gzipSync } from 'node:zlib'
import { v7 as uuidv7 } from 'uuid'
import type { ClickHouseClient } from '../../../src/clickhouse/client.ts'
import { snapshotMessages } from '../../../src/recordings/ingest.ts'

export const rr = {
  meta: (t: number, href: string) => ({ type: 4, timestamp: t, data: { href, width: 1280, height: 720 } }),
  full: (t: number) => ({
    type: 2,
    timestamp: t,
    data: { node: { type: 0, id: 1, childNodes: [] }, initialOffset: { top: 0, left: 0 } },
  }),
  click: (t: number) => ({ type: 3, timestamp: t, data: { source: 2, type: 2, id: 5, x: 10, y: 10 } }),
  input: (t: number) => ({ type: 3, timestamp: t, data: { source: 5, text: 'a', isChecked: false, id: 6 } }),
  move: (t: number) => ({
    type: 3,
    timestamp: t,
    data: { source: 1, positions: [{ x: 1, y: 2, id: 5, timeOffset: 0 }] },
  }),
  mutation: (t: number) => ({
    type: 3,
    timestamp: t,
    data: { source: 0, adds: [], removes: [], texts: [], attributes: [] },
  }),
  console: (t: number, level: string, text = 'hello') => ({
    type: 6,
    timestamp: t,
    data: { plugin: 'rrweb/console@1', payload: { level, payload: [JSON.stringify(text)], trace: [] } },
  }),
}

export interface SnapshotBatch {
  session: string
  window: string
  distinctId: string
  events: object[]
}

/** The body posthog-js posts to /s/: a JSON array of $snapshot events. */
export function snapshotBody(token: string, batches: SnapshotBatch[]) {
  return batches.map((b) => ({
    uuid: uuidv7(),
    event: '$snapshot',
    properties: {
      $snapshot_data: b.events,
      $snapshot_bytes: JSON.stringify(b.events).length,
      $session_id: b.session,
      $window_id: b.window,
      $lib: 'web',
      $snapshot_source: 'web',
      distinct_id: b.distinctId,
      token,
    },
    timestamp: new Date().toISOString(),
  }))
}

/** POSTs snapshots to /s/ gzipped (posthog-js's default), returns the response. */
export async function postSnapshots(base: string, token: string, batches: SnapshotBatch[], gzip = true) {
  const json = JSON.stringify(snapshotBody(token, batches))
  const res = await fetch(`${base}/s/`, {
    method: 'POST',
    headers: { 'content-type': 'text/plain' },
    body: gzip ? gzipSync(json) : json,
  })
  return { status: res.status, body: await res.text() }
}

/** Polls `fn` until it returns a value that is not undefined. */
export async function until<T>(
  fn: () => Promise<T | undefined>,
  timeoutMs = 20_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await fn()
    if (v !== undefined) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** The JSON lines of a blob_v2 response as [window_id, event] pairs. */
export const jsonl = (text: string): [string, { type: number; timestamp: number }][] =>
  text.length ? text.split('\n').map((l) => JSON.parse(l)) : []

/** The RECORDINGS messages capture writes for one request of `events`, received at `at`. */
export async function chunkMessages(
  team: number,
  session: string,
  at: string,
  events: object[],
  distinctId = 'u',
) {
  const { messages } = await snapshotMessages(
    [
      {
        event: '$snapshot',
        distinct_id: distinctId,
        properties: { $session_id: session, $window_id: 'w', $snapshot_data: events },
      },
    ],
    {
      teamId: team,
      nowMs: Date.parse(at),
      ip: null,
      sentAt: undefined,
      partitions: 1,
      maxMessageBytes: 1 << 20,
    },
  )
  return messages
}

/** An rrweb DOM of `n` elements (a document with a body of nested divs with text). */
export function dom(n: number) {
  let id = 3
  const children = Array.from({ length: n }, (_, i) => ({
    type: 2,
    tagName: 'div',
    attributes: { class: `row row-${i % 7}`, 'data-i': String(i) },
    childNodes: [
      { type: 3, textContent: `item ${i} of the list, some words to make it look like a page`, id: id++ },
    ],
    id: id++,
  }))
  return {
    node: {
      type: 0,
      childNodes: [{ type: 2, tagName: 'body', attributes: {}, childNodes: children, id: 2 }],
      id: 1,
    },
    initialOffset: { top: 0, left: 0 },
  }
}

/**
 * `minutes` of generated activity as posthog-js would send it, one request per 2 s: a full
 * snapshot at the start and every 5 minutes, mouse movement every second, a DOM mutation every
 * second, a click every 7 s, typing every 3 s, a console line every 30 s. Returns the requests'
 * events and the totals a summary of them must show.
 */
export function generatedSession(t0: number, minutes: number) {
  const requests: object[][] = []
  let clicks = 0
  let keys = 0
  for (let s = 0; s < minutes * 60; s += 2) {
    const events: object[] = []
    for (const sec of [s, s + 1]) {
      const t = t0 + sec * 1000
      if (sec % 300 === 0)
        events.push(rr.meta(t, 'https://shop.example/checkout'), { ...rr.full(t), data: dom(1500) })
      events.push({
        type: 3,
        timestamp: t + 100,
        data: {
          source: 1,
          positions: Array.from({ length: 10 }, (_, i) => ({
            x: sec + i,
            y: i * 3,
            id: 5,
            timeOffset: -i * 50,
          })),
        },
      })
      events.push({
        type: 3,
        timestamp: t + 200,
        data: {
          source: 0,
          adds: [
            { parentId: 2, nextId: null, node: { type: 3, textContent: `tick ${sec}`, id: 100000 + sec } },
          ],
          removes: [],
          texts: [],
          attributes: [],
        },
      })
      if (sec % 7 === 0) {
        events.push(rr.click(t + 300))
        clicks++
      }
      if (sec % 3 === 0) {
        events.push(rr.input(t + 400))
        keys++
      }
      if (sec % 30 === 0) events.push(rr.console(t + 500, 'log', `at ${sec}`))
    }
    requests.push(events)
  }
  return { requests, clicks, keys, events: requests.reduce((n, r) => n + r.length, 0) }
}

/** Rows of `event` the team has in the events table. */
export async function eventCount(ch: ClickHouseClient, team: number, event: string): Promise<number> {
  const r = await ch.query({
    query: `SELECT count() AS n FROM events WHERE team_id = ${team} AND event = '${event.replace(/'/g, "\\'")}'`,
    format: 'JSONEachRow',
  })
  return Number((await r.json<{ n: string }>())[0]!.n)
}

// rrweb events and /s/ requests as posthog-js sends them, for the recordings tests.
import { gzipSync } from 'node:zlib'
import { v7 as uuidv7 } from 'uuid'
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

// A recording's rrweb events for the player, read the way PostHog's player reads them: the sources
// (blocks) first, then the blocks' JSON lines `["<window_id>", <event>]`, at most 21 blocks a request.
import { projectPath, segment } from './api.js'

/** PostHog's limit on blob_v2 blocks per request with a personal API key (end - start ≤ 20). */
const BLOCKS_PER_REQUEST = 21

/** The gzip bytes posthog-js packed into a string, one character per byte, as text. */
async function gunzipLatin1(s) {
  const bytes = Uint8Array.from(s, (c) => c.charCodeAt(0))
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'))
  return new Response(stream).text()
}

const unzipJson = async (v) => (typeof v === 'string' ? JSON.parse(await gunzipLatin1(v)) : v)

/**
 * posthog-js's `compress_events` (cv "2024-10") gzips a full snapshot's `data` and a mutation's
 * adds/removes/texts/attributes into strings; rrweb's replayer needs them as objects again.
 */
export async function decompressEvent(e) {
  if (e.cv !== '2024-10') return e
  const { cv: _cv, ...event } = e
  if (e.type === 2) return { ...event, data: await unzipJson(e.data) }
  if (e.type === 3 && e.data?.source === 0) {
    const data = { ...e.data }
    for (const k of ['adds', 'removes', 'texts', 'attributes']) data[k] = await unzipJson(data[k])
    return { ...event, data }
  }
  return event
}

/** Parses a blob_v2 answer: JSON lines of `[window_id, event]`. */
export function parseBlobLines(text) {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l)[1])
}

/** Every rrweb event of a recording, decompressed and in time order. */
export async function loadSnapshots(api, projectId, sessionId, signal) {
  const base = projectPath(projectId, `session_recordings/${segment('token', sessionId)}/snapshots/`)
  const { sources } = await api.get(base, signal)
  const keys = sources.filter((s) => s.source === 'blob_v2').map((s) => Number(s.blob_key))
  if (keys.length === 0) return []
  const last = Math.max(...keys)
  const events = []
  for (let start = Math.min(...keys); start <= last; start += BLOCKS_PER_REQUEST) {
    const params = new URLSearchParams({
      source: 'blob_v2',
      start_blob_key: String(start),
      end_blob_key: String(Math.min(start + BLOCKS_PER_REQUEST - 1, last)),
    })
    events.push(...parseBlobLines(await api.getText(`${base}?${params}`, signal)))
  }
  const out = await Promise.all(events.map(decompressEvent))
  // Windows interleave: the replayer wants one timeline.
  return out.sort((a, b) => a.timestamp - b.timestamp)
}

// Every call the console makes goes through here: the public API with the signed-in personal key.
import { readSse } from './sse.js'

/** An API answer that was not 2xx, with PostHog's error body fields. */
export class ApiError extends Error {
  constructor(status, body) {
    const detail = (body && (body.detail || body.error_message)) || `HTTP ${status}`
    super(detail)
    this.status = status
    this.body = body
    this.detail = detail
    this.attr = body?.attr ?? null
    /** position of a query error in the query text, when the API gives one */
    this.start = typeof body?.start === 'number' ? body.start : null
    this.end = typeof body?.end === 'number' ? body.end : null
  }
}

// The API runs at most 4 queries at once per personal API key (QUERY_MAX_CONCURRENT_PER_KEY) and
// answers 429 past that. A page that asks for many at once (web analytics: the overview and four
// tables) queues its query requests here instead, at most 3 in flight from this tab, leaving one
// slot for anything else the key runs. A slot is handed straight to the next in line. A query's
// `signal` takes it out of the line; once sent it runs to its answer (which the page may ignore),
// so that this tab never counts a slot free that the server still holds.
const QUERY_SLOTS = 3
let running = 0
const waiting = []
const isQuery = (method, path) => method === 'POST' && /\/query\/?$/.test(path.split('?')[0])
function takeSlot() {
  if (running < QUERY_SLOTS) {
    running++
    return Promise.resolve()
  }
  return new Promise((resolve) => waiting.push(resolve))
}
function giveSlot() {
  const next = waiting.shift()
  if (next) next()
  else running--
}

/** A client bound to one personal API key. */
export function createApi(key) {
  const headers = (extra = {}) => ({ authorization: `Bearer ${key}`, ...extra })

  async function call(method, path, body, signal, raw = false) {
    if (!isQuery(method, path)) return send(method, path, body, signal, raw)
    await takeSlot()
    try {
      if (signal?.aborted) throw new DOMException('The query was not needed any more.', 'AbortError')
      return await send(method, path, body, undefined, raw)
    } finally {
      giveSlot()
    }
  }

  async function send(method, path, body, signal, raw) {
    // a segment that was not an id (segment() below): the call is not made
    if (path.includes(NOT_AN_ID)) throw new ApiError(400, { detail: 'That is not a valid id.' })
    const res = await fetch(path, {
      method,
      headers: headers(body !== undefined ? { 'content-type': 'application/json' } : {}),
      body: body !== undefined ? JSON.stringify(body) : undefined,
      signal,
    })
    const text = await res.text()
    if (raw && res.ok) return text
    let json
    try {
      json = text ? JSON.parse(text) : null
    } catch {
      json = { detail: text }
    }
    if (!res.ok) throw new ApiError(res.status, json)
    return json
  }

  return {
    get: (path, signal) => call('GET', path, undefined, signal),
    /** A GET whose 2xx body is not JSON (recording snapshots are JSON lines). */
    getText: (path, signal) => call('GET', path, undefined, signal, true),
    post: (path, body, signal) => call('POST', path, body ?? {}, signal),
    patch: (path, body) => call('PATCH', path, body),
    del: (path) => call('DELETE', path),
    /** Opens a server-sent event stream; resolves when it ends (or the signal aborts). */
    async stream(path, onEvent, signal) {
      if (path.includes(NOT_AN_ID)) throw new ApiError(400, { detail: 'That is not a valid id.' })
      const res = await fetch(path, { headers: headers({ accept: 'text/event-stream' }), signal })
      if (!res.ok) {
        let body = null
        try {
          body = await res.json()
        } catch {}
        throw new ApiError(res.status, body)
      }
      await readSse(res, onEvent, signal)
    },
  }
}

// Every value the console puts into an API path is one encoded segment of a known kind: a link such
// as `#/people/..%2F..%2Fapi%2Fprojects` must never make the console call another endpoint with the
// signed-in key (client-side path traversal). A value that is not an id of its kind makes the call
// fail with a 400 before anything is sent.
const NOT_AN_ID = '\u0000not-an-id'
const ID_KINDS = {
  /** projects, flags, playlists: whole numbers */
  int: /^\d{1,12}$/,
  /** persons, sessions' and events' uuids */
  uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
  /** client query ids and session ids: letters, digits, `-`, `_`, `.`, `:` (never `.` or `..` alone) */
  token: /^(?!\.{1,2}$)[A-Za-z0-9._:-]{1,200}$/,
}

/** `value` as one path segment when it is an id of `kind` (int, uuid, token); else the call fails. */
export function segment(kind, value) {
  const text = String(value)
  return ID_KINDS[kind].test(text) ? encodeURIComponent(text) : NOT_AN_ID
}

/** The project-scoped prefix of the API. */
export const projectPath = (projectId, rest) => `/api/projects/${segment('int', projectId)}/${rest}`

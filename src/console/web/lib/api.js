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

/** A client bound to one personal API key. */
export function createApi(key) {
  const headers = (extra = {}) => ({ authorization: `Bearer ${key}`, ...extra })

  async function call(method, path, body, signal, raw = false) {
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

/** The project-scoped prefix of the API. */
export const projectPath = (projectId, rest) => `/api/projects/${projectId}/${rest}`

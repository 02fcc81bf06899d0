import type { IncomingMessage } from 'node:http'

// A body refused on its size is refused before it is read (fastify checks Content-Length first),
// and the connection is closed after the answer, since the client may still be sending. Closed at
// once, the client's pending write fails (EPIPE, ECONNRESET) and it never reads the 413 — posthog-js
// and other SDKs then retry the same oversized batch as a network error instead of splitting it.
// Reading the rest of the body (and dropping it) before answering lets every client see the 413.

/** Bodies announced larger than this are not read: the connection is closed on them as before. */
export const UNREAD_BODY_MAX_BYTES = 64 * 1024 * 1024
/** The longest the answer waits for the rest of a body. */
export const UNREAD_BODY_MAX_MS = 10_000

/**
 * Reads and drops what is left of `req`'s body. Resolves once it has all arrived, at once when
 * nothing is left or more than `maxBytes` is announced (Content-Length), and as soon as more than
 * `maxBytes` arrive or `maxMs` pass.
 */
export function discardUnreadBody(
  req: IncomingMessage,
  maxBytes = UNREAD_BODY_MAX_BYTES,
  maxMs = UNREAD_BODY_MAX_MS,
): Promise<void> {
  if (req.complete || req.destroyed || Number(req.headers['content-length']) > maxBytes)
    return Promise.resolve()
  return new Promise((resolve) => {
    let seen = 0
    const onData = (chunk: Buffer) => {
      seen += chunk.length
      if (seen > maxBytes) finish()
    }
    const finish = () => {
      clearTimeout(timer)
      req.off('data', onData)
      req.off('end', finish)
      req.off('close', finish)
      req.off('error', finish)
      resolve()
    }
    const timer = setTimeout(finish, maxMs)
    req.on('data', onData)
    req.once('end', finish)
    req.once('close', finish)
    req.once('error', finish)
    req.resume()
  })
}

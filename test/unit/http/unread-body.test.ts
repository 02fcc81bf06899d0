import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLogger } from '../../../src/observability/logger.ts'
import { type App, createHttpServer } from '../../../src/http/server.ts'

// A client still sending a body the server refused on its size must get to read the 413: the
// answer waits for the rest of the body instead of closing the connection under the client.

const LIMIT = 1024
let app: App
let port: number

beforeAll(async () => {
  app = createHttpServer({
    log: createLogger('silent'),
    bodyLimit: LIMIT,
    trustProxy: [],
    cors: { publicOrigins: ['*'], apiOrigins: [] },
    timeouts: { requestMs: 30_000, headersMs: 10_000, idleMs: 30_000 },
  })
  app.post('/batch/', async () => ({ status: 1 }))
  await app.listen({ port: 0, host: '127.0.0.1' })
  port = (app.server.address() as { port: number }).port
})
afterAll(() => app.close())

/** Sends headers and the first part of the body, pauses, then the rest; records what came back when. */
function slowUpload(total: number, firstPart: number, pauseMs: number) {
  return new Promise<{ answer: string; answeredBeforeRest: boolean; writeError: string | null }>(
    (resolve, reject) => {
      const sock = connect(port, '127.0.0.1')
      let answer = ''
      let restSent = false
      let answeredBeforeRest = false
      let writeError: string | null = null
      sock.on('data', (b) => {
        if (!restSent) answeredBeforeRest = true
        answer += b.toString()
      })
      sock.on('error', (err: NodeJS.ErrnoException) => (writeError = err.code ?? err.message))
      sock.on('close', () => resolve({ answer, answeredBeforeRest, writeError }))
      sock.on('connect', () => {
        sock.write(
          `POST /batch/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${total}\r\n\r\n`,
        )
        sock.write('x'.repeat(firstPart))
        setTimeout(() => {
          restSent = true
          sock.write('x'.repeat(total - firstPart), () => undefined)
        }, pauseMs)
      })
      setTimeout(() => reject(new Error(`no answer; got ${answer}`)), 20_000).unref()
    },
  )
}

describe('a body refused on its size', () => {
  it('is answered 413 once the client has sent all of it, on a connection that then closes', async () => {
    const r = await slowUpload(64 * LIMIT, 4 * LIMIT, 300)
    expect(r.answeredBeforeRest).toBe(false)
    expect(r.writeError).toBeNull()
    expect(r.answer).toMatch(/^HTTP\/1\.1 413 /)
    expect(r.answer.toLowerCase()).toContain('connection: close')
    expect(JSON.parse(r.answer.slice(r.answer.indexOf('\r\n\r\n') + 4))).toMatchObject({
      code: 'payload_too_large',
    })
  })
})

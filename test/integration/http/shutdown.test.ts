import { connect, type Socket } from 'node:net'
import { describe, expect, it } from 'vitest'
import { createTestProject, startTestBurrow, WITHOUT_PROJECTOR } from '../../harness/index.ts'

// Shutdown finishes the requests in flight and then lets go of their connections. Node closes the
// keep-alive connections that are idle when the server closes; a connection whose request was still
// being answered became idle only afterwards and was kept open until its keep-alive timeout (72 s),
// and the shutdown waited for it (seen in CI as a test Burrow taking 70 s to stop).

/** Resolves with what the server sent until it closed the connection. */
const untilClosed = (socket: Socket) =>
  new Promise<string>((resolve) => {
    let text = ''
    socket.on('data', (b: Buffer) => (text += b.toString()))
    socket.on('close', () => resolve(text))
  })

describe('shutdown with a request in flight on a keep-alive connection', () => {
  it('answers the request, then closes the connection and stops without waiting for its keep-alive timeout', async () => {
    const burrow = await startTestBurrow({}, WITHOUT_PROJECTOR)
    const project = await createTestProject('shutdown in flight')
    const body = JSON.stringify({
      api_key: project.api_token,
      batch: [{ event: 'in flight', distinct_id: 'd1', properties: {} }],
    })
    const { port } = new URL(burrow.url)
    const socket = connect(Number(port), '127.0.0.1')
    await new Promise((resolve) => socket.once('connect', resolve))
    const answer = untilClosed(socket)
    // Fastify's own listener runs first: once this one runs, the request is routed (a request that
    // arrives while the server closes is answered 503 and its connection closed at once).
    const routed = new Promise((resolve) => burrow.app.server.once('request', resolve))
    // The headers and half the body: the request is routed and waits for the rest.
    socket.write(
      `POST /batch/ HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 20)}`,
    )
    await routed
    const stopped = burrow.stop()
    // the server has begun to close (its idle connections closed, this one in flight)
    while (burrow.app.server.listening) await new Promise((resolve) => setTimeout(resolve, 10))
    socket.write(body.slice(20))
    // Without the fix the connection stays open for 72 s and this test runs into its timeout.
    const text = await answer
    expect(text).toMatch(/^HTTP\/1\.1 200 /)
    await stopped
  }, 20_000)
})

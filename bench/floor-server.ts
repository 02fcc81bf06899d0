// The least an HTTP server on this machine can do per single-event request, for bench/floor.ts.
// MODE=node: node:http, the body read and parsed, a fixed 200; MODE=fastify: the same in Fastify
// (Burrow's framework) with its own JSON parser; MODE=fastify-publish: Fastify, then the body
// published to JetStream as one message and the 200 sent once JetStream acked it (durable capture
// with nothing else: no key check, no validation, no batching of requests).
// Prints `listening <port>` on stdout once it accepts requests.
import { createServer } from 'node:http'
import { jetstream } from '@nats-io/jetstream'
import Fastify from 'fastify'
import { connectNats } from '../src/jetstream/connection.ts'

const mode = process.env.MODE ?? 'node'
const reply = '{"status":1}'

if (mode === 'node') {
  const server = createServer((req, res) => {
    const parts: Buffer[] = []
    req.on('data', (b: Buffer) => parts.push(b))
    req.on('end', () => {
      JSON.parse(Buffer.concat(parts).toString())
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': reply.length })
      res.end(reply)
    })
  })
  server.keepAliveTimeout = 60_000
  server.listen(0, '127.0.0.1', () => {
    const a = server.address()
    console.log(`listening ${typeof a === 'object' && a ? a.port : 0}`)
  })
} else {
  const app = Fastify({ logger: false })
  if (mode === 'fastify-publish') {
    const nc = await connectNats(process.env.NATS_URL!)
    const js = jetstream(nc)
    const enc = new TextEncoder()
    const subject = process.env.SUBJECT!
    app.post('/i/v0/e/', async (req) => {
      const body = req.body as { uuid: string }
      await js.publish(subject, enc.encode(JSON.stringify(body)), { msgID: body.uuid })
      return { status: 1 }
    })
  } else {
    app.post('/i/v0/e/', async () => ({ status: 1 }))
  }
  await app.listen({ port: 0, host: '127.0.0.1' })
  const a = app.server.address()
  console.log(`listening ${typeof a === 'object' && a ? a.port : 0}`)
}

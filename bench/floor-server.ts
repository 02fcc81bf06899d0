// The least an HTTP server on this machine can do per single-event request, for bench/floor.ts.
// MODE=node: node:http, the body read and parsed, a fixed 200; MODE=fastify: the same in Fastify
// (Burrow's framework) with its own JSON parser; MODE=fastify-publish: Fastify, then the body
// published to JetStream as one message and the 200 sent once JetStream acked it (durable capture
// with nothing else: no key check, no validation, no batching of requests); MODE=fastify-group:
// durable as fastify-publish, but the requests that arrive in one turn of the event loop share one
// JetStream message and its ack (Burrow's group commit at its least: no limit on messages in flight,
// no wait for company). WORKERS=n (default 1) runs n such servers on one port with node:cluster.
// Prints `listening <port>` on stdout once every worker accepts requests.
import cluster from 'node:cluster'
import { createServer } from 'node:http'
import { jetstream } from '@nats-io/jetstream'
import Fastify from 'fastify'
import { connectNats } from '../src/jetstream/connection.ts'

const mode = process.env.MODE ?? 'node'
const workers = Number(process.env.WORKERS ?? 1)
const reply = '{"status":1}'

function ready(port: number) {
  if (cluster.isWorker) process.send!({ port })
  else console.log(`listening ${port}`)
}

function serveNode() {
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
    ready(typeof a === 'object' && a ? a.port : 0)
  })
}

async function serveFastify() {
  const app = Fastify({ logger: false })
  if (mode === 'fastify-publish' || mode === 'fastify-group') {
    const nc = await connectNats(process.env.NATS_URL!)
    const js = jetstream(nc)
    const enc = new TextEncoder()
    const subject = process.env.SUBJECT!
    if (mode === 'fastify-publish') {
      app.post('/i/v0/e/', async (req) => {
        const body = req.body as { uuid: string }
        await js.publish(subject, enc.encode(JSON.stringify(body)), { msgID: body.uuid })
        return { status: 1 }
      })
    } else {
      type Waiter = { body: string; uuid: string; done: (error?: unknown) => void }
      let pending: Waiter[] = []
      const flush = () => {
        const group = pending
        pending = []
        const payload = enc.encode(`[${group.map((w) => w.body).join(',')}]`)
        js.publish(subject, payload, { msgID: group[0]!.uuid }).then(
          () => group.forEach((w) => w.done()),
          (error: unknown) => group.forEach((w) => w.done(error)),
        )
      }
      app.post('/i/v0/e/', (req) => {
        const body = req.body as { uuid: string }
        return new Promise((resolve, reject) => {
          if (pending.length === 0) setImmediate(flush)
          pending.push({
            body: JSON.stringify(body),
            uuid: body.uuid,
            done: (error) => (error ? reject(error) : resolve({ status: 1 })),
          })
        })
      })
    }
  } else {
    app.post('/i/v0/e/', async () => ({ status: 1 }))
  }
  await app.listen({ port: 0, host: '127.0.0.1' })
  const a = app.server.address()
  ready(typeof a === 'object' && a ? a.port : 0)
}

if (cluster.isPrimary && workers > 1) {
  // node:cluster gives every worker's listen(0) the same port; the primary hands out connections.
  let listening = 0
  for (let i = 0; i < workers; i++) {
    cluster.fork().on('message', (m: { port: number }) => {
      if (++listening === workers) console.log(`listening ${m.port}`)
    })
  }
  process.on('SIGTERM', () => {
    for (const w of Object.values(cluster.workers ?? {})) w?.kill('SIGTERM')
    process.exit(0)
  })
} else if (mode === 'node') {
  serveNode()
} else {
  await serveFastify()
}

// The least ingestion pipeline this machine runs, for bench/ingest-floor.ts: the shape of Burrow's
// (HTTP capture → one JetStream log → a projector process → ClickHouse `events`), with everything a
// PostHog-compatible backend does beyond moving the bytes left out.
//   MODE=capture    node:http on /batch/: the body read and JSON.parse'd (the least validation), the
//                   body's bytes published as one message to SUBJECT, the 200 sent once JetStream
//                   acked it. No key check, no per-event stamping or normalization, no dedup id.
//   MODE=projector  a pull consumer on SUBJECT: up to 10 messages (10,000 events) per batch, each
//                   JSON.parse'd, one `events` line per event exactly as Burrow writes it (rows.ts)
//                   with a person id from an in-memory map (no identity store, no person rows, no
//                   property rules), one INSERT per batch, the batch acked after ClickHouse answered
//                   (and every batch before it); INSERTS (2) run at once while the next is encoded.
// Prints `listening <port>` (capture) or `ready` (projector) on stdout once it takes work.
import { createServer } from 'node:http'
import { AckPolicy, jetstream, jetstreamManager, type JsMsg } from '@nats-io/jetstream'
import { v7 as uuidv7 } from 'uuid'
import { clickhouseClient } from '../src/clickhouse/client.ts'
import { connectNats } from '../src/jetstream/connection.ts'
import { insertTsv } from '../src/projectors/clickhouse-io.ts'
import { eventLine } from '../src/projectors/rows.ts'
import { EVENT_COLUMNS } from '../src/projectors/tables.ts'
import type { BenchEvent } from './lib.ts'

const mode = process.env.MODE ?? 'capture'
const subject = process.env.SUBJECT!
const nc = await connectNats(process.env.NATS_URL!)
const js = jetstream(nc)

if (mode === 'capture') {
  const reply = '{"status":1}'
  const server = createServer((req, res) => {
    const parts: Buffer[] = []
    req.on('data', (b: Buffer) => parts.push(b))
    req.on('end', () => {
      const body = Buffer.concat(parts)
      JSON.parse(body.toString())
      js.publish(subject, body).then(
        () => {
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': reply.length })
          res.end(reply)
        },
        (err: Error) => {
          res.writeHead(503)
          res.end(String(err))
        },
      )
    })
  })
  server.keepAliveTimeout = 60_000
  server.listen(0, '127.0.0.1', () => {
    const a = server.address()
    console.log(`listening ${typeof a === 'object' && a ? a.port : 0}`)
  })
} else {
  const team = Number(process.env.TEAM)
  const ch = clickhouseClient(process.env.CLICKHOUSE_URL!, process.env.CLICKHOUSE_DATABASE!)
  const jsm = await jetstreamManager(nc)
  const stream = process.env.STREAM!
  await jsm.consumers.add(stream, {
    durable_name: 'floor',
    ack_policy: AckPolicy.All,
    filter_subject: subject,
    max_ack_pending: 100,
  })
  const consumer = await js.consumers.get(stream, 'floor')
  const queue: JsMsg[] = []
  let wake: (() => void) | undefined
  await consumer.consume({
    max_messages: 40,
    callback: (m) => {
      queue.push(m)
      wake?.()
    },
  })
  const persons = new Map<string, string>()
  let seq = 0
  // INSERTS (2) at once: ClickHouse takes each INSERT on a thread of its own; acks stay in log order
  // (AckPolicy.All: the last message of a batch acknowledges it and every one before)
  const inserts = Number(process.env.INSERTS ?? 2)
  const inFlight: Promise<void>[] = []
  let acked: Promise<void> = Promise.resolve()
  console.log('ready')
  for (;;) {
    if (queue.length === 0) await new Promise<void>((r) => (wake = r))
    wake = undefined
    const batch = queue.splice(0, 10)
    const lines: string[] = []
    for (const m of batch) {
      seq++
      const { batch: events } = JSON.parse(new TextDecoder().decode(m.data)) as { batch: BenchEvent[] }
      for (const [offset, e] of events.entries()) {
        let person = persons.get(e.distinct_id)
        if (person === undefined) persons.set(e.distinct_id, (person = uuidv7()))
        const ts = Date.parse(e.timestamp)
        lines.push(
          eventLine({
            teamId: team,
            uuid: e.uuid,
            event: e.event,
            distinctId: e.distinct_id,
            personId: person,
            timestampMs: ts,
            properties: e.properties,
            personProperties: {},
            elementsChain: '',
            sessionId: String(e.properties.$session_id ?? ''),
            groups: ['', '', '', '', ''],
            createdAtMs: ts,
            seq,
            offset,
          }),
        )
      }
    }
    while (inFlight.length >= inserts) await inFlight.shift()
    const last = batch.at(-1)!
    const written = insertTsv(ch, 'events', EVENT_COLUMNS, lines)
    acked = Promise.all([acked, written]).then(() => last.ack())
    inFlight.push(acked)
  }
}

// How fast the console's live watch reads the event log, against the least a reader must do: an
// ordered consumer that JSON-parses each message (each event line of it) and counts its events. Both read the same messages
// from the same server; the watch also keeps per-second counters, tracks projection and feeds a tail.
// Run: npx tsx bench/console-live.ts   (env SINGLES, CHUNKED to size it)
import { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream'
import { v7 as uuidv7 } from 'uuid'
import { EVENTS_STREAM } from '../schema/jetstream.ts'
import { EventPublisher } from '../src/capture/publisher.ts'
import { LogWatch, WINDOW_SECONDS } from '../src/console/live/log-watch.ts'
import { type CapturedEvent, parseLogMessage } from '../src/jetstream/messages.ts'
import { connectNats } from '../src/jetstream/connection.ts'
import { createLogger } from '../src/observability/logger.ts'
import { benchBurrow, rate } from './lib.ts'

const SINGLES = Number(process.env.SINGLES ?? 100_000)
const CHUNKED = Number(process.env.CHUNKED ?? 500_000)

// capture only: no projector competing for the CPU while the readers are timed
const burrow = await benchBurrow({ ROLE: 'capture' })
const nc = await connectNats(burrow.natsUrl, 'bench-console')
const teamId = burrow.credentials.project_id
const publisher = new EventPublisher(nc, { partitions: 4, chunkEvents: 100, ackTimeoutMs: 30_000 })

const event = (i: number): CapturedEvent => {
  const now = new Date().toISOString()
  return {
    uuid: uuidv7(),
    event: '$pageview',
    distinct_id: `user-${i % 5000}`,
    properties: { $current_url: `https://example.com/p/${i % 100}`, $browser: 'Chrome', $lib: 'bench', n: i },
    timestamp: now,
    now,
    sent_at: null,
    ip: null,
    team_id: teamId,
  }
}

async function publish(total: number, perMessage: number): Promise<void> {
  const inFlight: Promise<unknown>[] = []
  for (let i = 0; i < total; i += perMessage) {
    const events = Array.from({ length: Math.min(perMessage, total - i) }, (_, k) => ({
      lane: 'live' as const,
      event: event(i + k),
    }))
    inFlight.push(publisher.publish(publisher.chunk(teamId, events).chunks))
    if (inFlight.length >= 256) await Promise.all(inFlight.splice(0))
  }
  await Promise.all(inFlight)
}

/** Baseline: parse every message stored since `fromMs` up to `lastSeq`, count events. */
async function baseline(fromMs: number, lastSeq: number): Promise<{ events: number; ms: number }> {
  const t0 = performance.now()
  const consumer = await jetstream(nc).consumers.get(EVENTS_STREAM, {
    deliver_policy: DeliverPolicy.StartTime,
    opt_start_time: new Date(fromMs).toISOString(),
  })
  const messages = await consumer.consume({ max_messages: 1000 })
  let events = 0
  for await (const m of messages) {
    events += (parseLogMessage(m.data) as { envelope: { events: unknown[] } }).envelope.events.length
    if (m.seq >= lastSeq) break
  }
  await messages.close()
  return { events, ms: performance.now() - t0 }
}

/** The console's watch (from 120 s back, so it reads the same messages) with one unfiltered tail. */
async function watch(lastSeq: number): Promise<{ ms: number; fromMs: number }> {
  const t0 = performance.now()
  const w = new LogWatch(nc, createLogger('warn'))
  const tail = w.subscribe(teamId, {})
  await w.start(() => tail.take())
  while (w.lastSeq < lastSeq) {
    tail.take()
    await new Promise((r) => setTimeout(r, 5))
  }
  const ms = performance.now() - t0
  await w.stop()
  return { ms, fromMs: w.startedMs - WINDOW_SECONDS * 1000 }
}

async function round(label: string, total: number, perMessage: number) {
  const jsm = await jetstreamManager(nc)
  await publish(total, perMessage)
  const last = (await jsm.streams.info(EVENTS_STREAM)).state.last_seq
  // The watch reads the last 120 s of the log (earlier rounds too); the baseline reads the same.
  const w = await watch(last)
  const base = [await baseline(w.fromMs, last), await baseline(w.fromMs, last)]
  const b = Math.min(...base.map((x) => x.ms))
  const events = base[0]!.events
  console.log(
    `${label.padEnd(34)} read ${events.toLocaleString('en')} events: baseline ${rate(events, b).toLocaleString('en')}/s   ` +
      `live watch ${rate(events, w.ms).toLocaleString('en')}/s   ratio watch/baseline ${(b / w.ms).toFixed(2)}`,
  )
}

try {
  await round(`${SINGLES} events, 1 per message`, SINGLES, 1)
  await round(`${CHUNKED} events, 100 per message`, CHUNKED, 100)
} finally {
  await nc.close()
  await burrow.cleanup()
}

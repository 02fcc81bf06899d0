// Reads what capture wrote to the EVENTS stream, for assertions.
import { DeliverPolicy, jetstream } from '@nats-io/jetstream'
import { EVENTS_STREAM } from '../../schema/jetstream.ts'
import {
  type CapturedEvent,
  type EventChunk,
  EventChunkSchema,
  parseLogMessage,
} from '../../src/jetstream/messages.ts'
import type { NatsConnection } from '../../src/jetstream/connection.ts'

export interface LoggedChunk {
  subject: string
  seq: number
  chunk: EventChunk
}

/** Every chunk of `teamId` in the stream right now, in log order. */
export async function readChunks(nc: NatsConnection, teamId: number): Promise<LoggedChunk[]> {
  const js = jetstream(nc)
  const jsm = await js.jetstreamManager()
  const last = (await jsm.streams.info(EVENTS_STREAM)).state.last_seq
  const out: LoggedChunk[] = []
  if (last === 0) return out
  const consumer = await js.consumers.get(EVENTS_STREAM, { deliver_policy: DeliverPolicy.All })
  const messages = await consumer.consume()
  for await (const m of messages) {
    // Other test files share this stream and may write other log versions (the replay tests write
    // version 1): only this team's chunks are read, and those strictly as capture writes them now.
    const parsed = parseLogMessage(m.data)
    const raw = 'envelope' in parsed ? (parsed.envelope as { team_id?: unknown }) : undefined
    if (raw?.team_id === teamId)
      out.push({ subject: m.subject, seq: m.seq, chunk: EventChunkSchema.parse(raw) })
    if (m.seq >= last) break
  }
  await messages.close()
  return out
}

export async function readEvents(
  nc: NatsConnection,
  teamId: number,
): Promise<(CapturedEvent & { subject: string })[]> {
  return (await readChunks(nc, teamId)).flatMap((c) =>
    c.chunk.events.map((e) => ({ ...e, subject: c.subject })),
  )
}

/** Polls until `n` events of the team are in the log (publishing is acked before the 200, so this is quick). */
export async function waitForEvents(nc: NatsConnection, teamId: number, n: number, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const events = await readEvents(nc, teamId)
    if (events.length >= n || Date.now() > deadline) return events
    await new Promise((r) => setTimeout(r, 200))
  }
}

import type { JetStreamManager } from '@nats-io/jetstream'
import type { KV } from '@nats-io/kv'
import { LANES } from '../../schema/jetstream.ts'
import type { Logger } from '../observability/logger.ts'
import { PAUSE_KEY, pausedKey } from './control.ts'
import { durableName } from './index.ts'

// What a replay keeps in the identity bucket: the replay in progress (so that running the command
// again resumes it) and the pause of the live projectors during the swap (see control.ts).

/** The replay in progress, as recorded in KV (`replay.state`). */
export interface ReplayState {
  id: string
  project: number | null
  fromSeq: number
  fromTime: string | null
  toSeq: number | null
  toTime: string | null
  stream: string
  subjectPrefix: string
}

/** The KV key of the replay in progress. */
export const REPLAY_STATE_KEY = 'replay.state'

const enc = new TextEncoder()

/** Writes a JSON document to the bucket. */
export const putJson = (kv: KV, key: string, v: unknown) => kv.put(key, enc.encode(JSON.stringify(v)))

/**
 * The unfinished replay of `stream` (resumed: true), or a new one recorded from the options. An
 * unfinished replay of another stream is replaced.
 */
export async function loadReplayState(
  kv: KV,
  o: { project?: number; from?: number | Date; to?: number | Date },
  stream: string,
  subjectPrefix: string,
): Promise<{ state: ReplayState; resumed: boolean }> {
  const saved = await kv.get(REPLAY_STATE_KEY)
  const state = saved?.operation === 'PUT' && saved.length > 0 ? saved.json<ReplayState>() : undefined
  if (state && state.stream === stream) return { state, resumed: true }
  const fresh: ReplayState = {
    id: Date.now().toString(36),
    project: o.project ?? null,
    fromSeq: typeof o.from === 'number' ? o.from : 1,
    fromTime: o.from instanceof Date ? o.from.toISOString() : null,
    toSeq: typeof o.to === 'number' ? o.to : null,
    toTime: o.to instanceof Date ? o.to.toISOString() : null,
    stream,
    subjectPrefix,
  }
  await putJson(kv, REPLAY_STATE_KEY, fresh)
  return { state: fresh, resumed: false }
}

/**
 * Pauses the projectors that are running (a durable with a waiting pull request has an owner) and
 * waits until each has finished its batch and confirmed; throws (and resumes them) after the timeout.
 */
export async function pauseProjectors(
  kv: KV,
  jsm: JetStreamManager,
  stream: string,
  durablePrefix: string,
  token: string,
  o: { log: Logger; pauseTimeoutMs?: number },
): Promise<void> {
  const active: string[] = []
  for (const lane of LANES) {
    const info = await jsm.consumers.info(stream, durableName(durablePrefix, lane)).catch(() => undefined)
    if (info && info.num_waiting > 0) active.push(info.name)
  }
  await kv.put(PAUSE_KEY, enc.encode(token))
  const deadline = Date.now() + (o.pauseTimeoutMs ?? 30_000)
  for (const durable of active) {
    for (;;) {
      const e = await kv.get(pausedKey(durable))
      if (e?.operation === 'PUT' && e.string() === token) break
      if (Date.now() > deadline) {
        await resumeProjectors(kv)
        throw new Error(`replay: projector ${durable} did not pause`)
      }
      await new Promise((r) => setTimeout(r, 50))
    }
  }
  o.log.info({ active }, 'replay: projectors paused')
}

/** Lets the paused projectors go on. */
export async function resumeProjectors(kv: KV): Promise<void> {
  await kv.delete(PAUSE_KEY)
}

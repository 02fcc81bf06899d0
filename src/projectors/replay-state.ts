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

/** How the live projectors' durables are named (index.ts), to find every one a replay concerns. */
export interface ProjectorNaming {
  /** the log */
  stream: string
  /** the default projector's durables `<prefix>-<lane>`, the leases' `<prefix>-p<partition>-<lane>` */
  durablePrefix: string
  /** team spread: identity stages `<prefix>-identity-p<p>-<lane>`, row writers `<prefix>-rows-p<q>` */
  spreadPrefix: string
  /** the stream the row writers read */
  resolvedStream: string
  /** LOG_PARTITIONS, when known: the durables of every partition, created yet or not */
  partitions?: number
}

/** The durables that project the log into the tables a replay swaps. */
export interface ProjectorDurables {
  /** consumers of the log (each a watermark source): default lanes, lease partitions, identity stages */
  lanes: string[]
  /** team spread's row writers (consumers of the resolved stream) */
  rowWriters: string[]
  /** those with an owner now (a waiting pull request), by stream: they must confirm the pause */
  active: { stream: string; durable: string }[]
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/**
 * Every durable of the three modes (default, partition leases, team spread) that projects into the
 * live tables: those the streams hold, and those `partitions` would name (a partition not projected
 * yet gets its position too, should it start after the swap).
 */
export async function projectorDurables(
  jsm: JetStreamManager,
  n: ProjectorNaming,
): Promise<ProjectorDurables> {
  const lane = `(${LANES.join('|')})`
  const isLane = new RegExp(
    `^(${escape(n.durablePrefix)}(-p\\d+)?|${escape(n.spreadPrefix)}-identity-p\\d+)-${lane}$`,
  )
  const isRowWriter = new RegExp(`^${escape(n.spreadPrefix)}-rows-p\\d+$`)
  const lanes = new Set<string>(LANES.map((l) => durableName(n.durablePrefix, l)))
  for (let p = 0; p < (n.partitions ?? 0); p++) {
    for (const l of LANES) {
      lanes.add(durableName(`${n.durablePrefix}-p${p}`, l))
      lanes.add(durableName(`${n.spreadPrefix}-identity-p${p}`, l))
    }
  }
  const active: ProjectorDurables['active'] = []
  const rowWriters: string[] = []
  const scan = async (stream: string, wanted: RegExp, found: (name: string) => void) => {
    try {
      for await (const info of jsm.consumers.list(stream)) {
        if (!wanted.test(info.name)) continue
        found(info.name)
        if (info.num_waiting > 0) active.push({ stream, durable: info.name })
      }
    } catch (err) {
      // no such stream (a deployment without team spread may lack RESOLVED): no durables there
      if (!/stream not found/i.test((err as Error).message)) throw err
    }
  }
  await scan(n.stream, isLane, (name) => lanes.add(name))
  await scan(n.resolvedStream, isRowWriter, (name) => rowWriters.push(name))
  return { lanes: [...lanes], rowWriters, active }
}

/**
 * Pauses the projectors and waits until each active one (`active`: those with an owner) has
 * finished its batch and confirmed; throws (and resumes them) after the timeout.
 */
export async function pauseProjectors(
  kv: KV,
  active: string[],
  token: string,
  o: { log: Logger; pauseTimeoutMs?: number },
): Promise<void> {
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

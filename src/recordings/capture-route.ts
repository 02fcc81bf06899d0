import { jetstream } from '@nats-io/jetstream'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Counter } from 'prom-client'
import type { Project } from '../accounts/documents.ts'
import type { ReadLimits } from '../capture/json-reader.ts'
import { CaptureQuery, readEnvelope, takeRawBodies } from '../capture/request.ts'
import type { Config } from '../config/env.ts'
import { AuthenticationError, Unavailable } from '../http/errors.ts'
import type { NatsConnection } from '../jetstream/connection.ts'
import { registry } from '../observability/metrics.ts'
import { snapshotMessages } from './ingest.ts'

// POST /s/: posthog-js's session recording endpoint. Answers 200 only once every message of the
// request is in the RECORDINGS stream; snapshots never go to the EVENTS stream or the events table.

const chunksCaptured = new Counter({
  name: 'burrow_recordings_chunks_captured_total',
  help: 'snapshot chunks written to the RECORDINGS stream',
  registers: [registry],
})
const bytesCaptured = new Counter({
  name: 'burrow_recordings_bytes_captured_total',
  help: 'uncompressed bytes of rrweb events written to the RECORDINGS stream',
  registers: [registry],
})
const snapshotsDropped = new Counter({
  name: 'burrow_recordings_items_dropped_total',
  help: '/s/ items dropped, by reason',
  labelNames: ['reason'],
  registers: [registry],
})

export const RECORDING_PATHS = ['/s', '/s/'] as const

export interface RecordingCaptureDeps {
  config: Config
  nc: NatsConnection
  projectByToken(token: string): Promise<Project | undefined>
}

/** Registers /s/ in its own scope: raw bodies up to RECORDINGS_MAX_BODY_BYTES, decoded like capture's. */
export async function registerRecordingCapture(app: FastifyInstance, deps: RecordingCaptureDeps) {
  const js = jetstream(deps.nc)
  const known = new Map<string, Project>()
  const project = async (token: string) => {
    const hit = known.get(token)
    if (hit) return hit
    const p = await deps.projectByToken(token)
    if (p) {
      if (known.size > 10_000) known.clear()
      known.set(token, p)
    }
    return p
  }
  // A full snapshot can be most of a body: no item is too long to read here (chunking happens when
  // the snapshot is stored), and big bodies are parsed in slices like capture's.
  const limits: ReadLimits = {
    maxEvents: deps.config.CAPTURE_MAX_EVENTS_PER_REQUEST,
    maxEventChars: deps.config.RECORDINGS_MAX_BODY_BYTES * 5,
    incrementalFrom: 256 * 1024,
  }
  await app.register(async (scope) => {
    takeRawBodies(scope)
    const handler = async (req: FastifyRequest) => {
      const query = CaptureQuery.parse(req.query ?? {})
      const nowMs = Date.now()
      const parsed = await readEnvelope(req, query, limits, deps.config.RECORDINGS_MAX_BODY_BYTES * 5)
      const p = await project(parsed.token)
      if (!p) throw new AuthenticationError('Project API key invalid.', 'invalid_api_key')
      const { messages, drops } = await snapshotMessages(parsed.items, {
        teamId: p.id,
        nowMs,
        ip: req.ip ?? null,
        sentAt: parsed.sentAt,
        partitions: deps.config.LOG_PARTITIONS,
        maxMessageBytes: deps.nc.info?.max_payload ?? 1024 * 1024,
      })
      if (messages.length) {
        if (deps.nc.isClosed()) throw new Unavailable('The recordings log is unavailable.')
        const results = await Promise.allSettled(
          messages.map((m) =>
            js.publish(m.subject, m.payload, { msgID: m.msgId, timeout: deps.config.CAPTURE_ACK_TIMEOUT_MS }),
          ),
        )
        const failed = results.find((r) => r.status === 'rejected')
        if (failed) {
          const why = (failed.reason as Error)?.message ?? 'unknown error'
          throw new Unavailable(`The recordings log did not acknowledge the snapshots: ${why}`)
        }
        for (const m of messages) {
          if (m.header.part === 0) {
            chunksCaptured.inc()
            bytesCaptured.inc(m.header.stats.size)
          }
        }
      }
      if (drops.size) {
        for (const [reason, n] of drops) snapshotsDropped.inc({ reason }, n)
        req.log.info({ project_id: p.id, dropped: Object.fromEntries(drops) }, 'snapshots dropped')
      }
      return { status: 1 }
    }
    for (const path of RECORDING_PATHS) {
      scope.post(path, { bodyLimit: deps.config.RECORDINGS_MAX_BODY_BYTES }, handler)
    }
  })
}

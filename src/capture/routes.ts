import type { FastifyInstance, FastifyRequest } from 'fastify'
import { z } from 'zod'
import type { Lane } from '../../schema/jetstream.ts'
import type { Project } from '../accounts/documents.ts'
import type { Config } from '../config/env.ts'
import { AuthenticationError } from '../http/errors.ts'
import type { CapturedEvent } from '../jetstream/messages.ts'
import { capturedEvents, droppedEvents, publishSeconds } from '../observability/metrics.ts'
import { OVERSIZE, type ReadLimits, Slicer } from './json-reader.ts'
import { TooManyEvents } from './limits.ts'
import { type DropReason, normalizeEvent } from './normalize.ts'
import type { OverflowDetector } from './overflow.ts'
import type { EventPublisher } from './publisher.ts'
import { CaptureQuery, readEnvelope, takeRawBodies } from './request.ts'

/** Bodies at least this long are parsed a batch item at a time (src/capture/json-reader.ts). */
const INCREMENTAL_FROM_CHARS = 256 * 1024
/** How long capture works on one request before letting others run. */
const SLICE_MS = 10
/**
 * Requests with at most this many events share log messages with concurrent ones (group commit,
 * src/capture/group-commit.ts); larger ones fill messages of their own and keep their own message ids.
 */
const GROUP_COMMIT_MAX_EVENTS = 100

export const CAPTURE_PATHS = ['/i/v0/e', '/batch', '/e', '/capture', '/track', '/engage'] as const

const Query = CaptureQuery.extend({ historical_migration: z.string().optional() })

function countDrop(drops: Map<DropReason, number>, reason: DropReason, n = 1): void {
  drops.set(reason, (drops.get(reason) ?? 0) + n)
}

export interface CaptureDeps {
  config: Config
  publisher: EventPublisher
  overflow: OverflowDetector
  projectByToken(token: string): Promise<Project | undefined>
}

export function registerCaptureRoutes(app: FastifyInstance, deps: CaptureDeps): void {
  takeRawBodies(app)

  const maxEvents = deps.config.CAPTURE_MAX_EVENTS_PER_REQUEST
  const limits: ReadLimits = {
    maxEvents,
    // an item this long cannot fit one log message once stored: it is dropped unread
    maxEventChars: 2 * deps.publisher.maxMessageBytes,
    incrementalFrom: INCREMENTAL_FROM_CHARS,
  }

  const handler = async (req: FastifyRequest) => {
    const query = Query.parse(req.query ?? {})
    const nowMs = Date.now()
    const parsed = await readEnvelope(req, query, limits, deps.config.CAPTURE_MAX_BODY_BYTES * 5)
    if (parsed.items.length > maxEvents) throw new TooManyEvents(maxEvents)
    const project = await deps.projectByToken(parsed.token)
    if (!project) throw new AuthenticationError('Project API key invalid.', 'invalid_api_key')
    const historical = parsed.historical || query.historical_migration === 'true'
    const accepted: { lane: Lane; event: CapturedEvent }[] = []
    // (no closures made per request: tsx names each one with a defineProperty call)
    const drops = new Map<DropReason, number>()
    const ctx = { teamId: project.id, nowMs, ip: req.ip ?? null, sentAt: parsed.sentAt }
    // Big batches are normalized and serialized a slice at a time, other requests in between.
    const slicer = new Slicer(SLICE_MS)
    for (const item of parsed.items) {
      if (slicer.due()) await slicer.pause()
      if (item === OVERSIZE) {
        countDrop(drops, 'event_too_large')
        continue
      }
      const n = normalizeEvent(item, ctx)
      if ('drop' in n) {
        countDrop(drops, n.drop)
        continue
      }
      const lane: Lane = historical
        ? 'historical'
        : deps.overflow.allow(project.id, n.ok.distinct_id, nowMs)
          ? 'live'
          : 'overflow'
      accepted.push({ lane, event: n.ok })
    }
    if (accepted.length > 0 && accepted.length <= GROUP_COMMIT_MAX_EVENTS) {
      // performance.now rather than the histogram's startTimer (hrtime, a closure, a label merge)
      const started = performance.now()
      const { tooLarge } = await deps.publisher.commitGrouped(project.id, accepted)
      publishSeconds.observe((performance.now() - started) / 1000)
      if (tooLarge.length) countDrop(drops, 'event_too_large', tooLarge.length)
      const notStored = new Set(tooLarge)
      const perLane = new Map<Lane, number>()
      for (const a of accepted)
        if (!notStored.has(a.event)) perLane.set(a.lane, (perLane.get(a.lane) ?? 0) + 1)
      for (const [lane, n] of perLane) capturedEvents.inc({ lane }, n)
    } else if (accepted.length > 0) {
      const chunks: ReturnType<EventPublisher['chunk']>['chunks'] = []
      const step = deps.config.CAPTURE_CHUNK_EVENTS
      for (let at = 0; at < accepted.length; at += step) {
        const part = deps.publisher.chunk(project.id, accepted.slice(at, at + step))
        chunks.push(...part.chunks)
        if (part.tooLarge.length) countDrop(drops, 'event_too_large', part.tooLarge.length)
        if (slicer.due()) await slicer.pause()
      }
      if (chunks.length) {
        const end = publishSeconds.startTimer()
        await deps.publisher.publish(chunks)
        end()
        for (const { chunk } of chunks) capturedEvents.inc({ lane: chunk.lane }, chunk.events.length)
      }
    }
    if (drops.size) {
      for (const [reason, n] of drops) droppedEvents.inc({ reason }, n)
      req.log.info({ project_id: project.id, dropped: Object.fromEntries(drops) }, 'events dropped')
    }
    return { status: 1 }
  }

  for (const path of CAPTURE_PATHS) {
    app.post(path, handler)
    app.post(`${path}/`, handler)
  }
}

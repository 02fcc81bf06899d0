import type { FastifyInstance } from 'fastify'
import { RateLimiter } from '../http/auth.ts'
import { PlaylistStore } from '../playlists/store.ts'
import type { Component, Runtime } from '../runtime/types.ts'
import { registerRecordingCapture } from './capture-route.ts'
import { startRecordingsProjector } from './projector.ts'
import { RecordingsReader } from './reader.ts'
import { expireRecordings } from './retention.ts'
import { registerRecordingRoutes } from './routes.ts'
import { ensureRecordingsLog, recordingsBucket } from './stream.ts'
import { ViewedStore } from './viewed.ts'

// Session recordings (docs/recordings.md): /s/ in capture processes, the session_recordings API in
// api processes, the recordings projector and its retention in projector processes. Each process
// makes sure the RECORDINGS stream and the recordings bucket exist before using them.

const readers = new WeakMap<Runtime, Promise<RecordingsReader>>()

/** The recordings reader of this process (the playlist endpoints read recordings through it). */
export function recordingsReader(rt: Runtime): Promise<RecordingsReader> {
  let r = readers.get(rt)
  if (!r) {
    r = (async () => {
      await ensureRecordingsLog(rt.nc, { maxAgeDays: rt.config.RECORDINGS_LOG_MAX_AGE_DAYS })
      return new RecordingsReader({
        ch: rt.ch,
        accounts: rt.accounts,
        viewed: new ViewedStore(await recordingsBucket(rt.nc)),
        playlists: await PlaylistStore.open(rt.nc),
        retentionDays: rt.config.RECORDINGS_RETENTION_DAYS,
      })
    })()
    r.catch(() => readers.delete(rt))
    readers.set(rt, r)
  }
  return r
}

export const recordingsComponent: Component = {
  name: 'recordings',
  roles: ['capture', 'api', 'projector'],
  async start(rt, app) {
    const { config, nc } = rt
    await ensureRecordingsLog(nc, { maxAgeDays: config.RECORDINGS_LOG_MAX_AGE_DAYS })
    const runs = (role: 'capture' | 'api' | 'projector') => config.ROLE === 'all' || config.ROLE === role
    const fastify = app as unknown as FastifyInstance
    if (runs('capture')) {
      await registerRecordingCapture(fastify, {
        config,
        nc,
        projectByToken: (token) => rt.accounts.projectByToken(token),
      })
    }
    if (runs('api')) {
      const reader = await recordingsReader(rt)
      const viewed = new ViewedStore(await recordingsBucket(nc))
      const playlists = await PlaylistStore.open(nc)
      const ctx = { rt, limiter: new RateLimiter(config.API_RATE_LIMIT_PER_MINUTE) }
      await fastify.register(async (scope) =>
        registerRecordingRoutes(scope, ctx, { reader, viewed, playlists, partitions: config.LOG_PARTITIONS }),
      )
    }
    if (!runs('projector')) return undefined
    const log = rt.log.child({ component: 'recordings' })
    const projector = await startRecordingsProjector({
      nc,
      ch: rt.ch,
      admin: rt.tables,
      log: rt.log,
      batchSize: config.PROJECTOR_BATCH_SIZE,
      maxWaitMs: config.PROJECTOR_MAX_WAIT_MS,
    })
    const playlists = await PlaylistStore.open(nc)
    let running: Promise<unknown> = Promise.resolve()
    const tick = () => {
      running = expireRecordings(
        rt.ch,
        rt.tables,
        playlists,
        config.RECORDINGS_RETENTION_DAYS,
        Date.now(),
        undefined,
        log,
      ).catch((err) => log.warn({ err }, 'recordings retention failed (will retry)'))
    }
    tick()
    const timer = setInterval(tick, config.RETENTION_INTERVAL_SECONDS * 1000)
    timer.unref()
    return {
      async stop() {
        clearInterval(timer)
        await running
        await projector.stop()
      },
    }
  },
}

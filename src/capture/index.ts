import type { Project } from '../accounts/documents.ts'
import type { Component } from '../runtime/types.ts'
import { OverflowDetector } from './overflow.ts'
import { EventPublisher } from './publisher.ts'
import { registerCaptureRoutes } from './routes.ts'

const NEGATIVE_TTL_MS = 2000

export const captureComponent: Component = {
  name: 'capture',
  roles: ['capture'],
  async start(rt, app) {
    const publisher = new EventPublisher(rt.nc, {
      partitions: rt.config.LOG_PARTITIONS,
      chunkEvents: rt.config.CAPTURE_CHUNK_EVENTS,
      ackTimeoutMs: rt.config.CAPTURE_ACK_TIMEOUT_MS,
    })
    // Project tokens never change once issued, so a found project is cached for the process;
    // an unknown token is remembered briefly so a misconfigured SDK cannot hammer the KV.
    const known = new Map<string, Project>()
    const unknown = new Map<string, number>()
    const projectByToken = async (token: string) => {
      const hit = known.get(token)
      if (hit) return hit
      if ((unknown.get(token) ?? 0) > Date.now()) return undefined
      const p = await rt.accounts.projectByToken(token)
      if (p) known.set(token, p)
      else {
        if (unknown.size > 10_000) unknown.clear()
        unknown.set(token, Date.now() + NEGATIVE_TTL_MS)
      }
      return p
    }
    await app.register(async (scope) =>
      registerCaptureRoutes(scope, {
        config: rt.config,
        publisher,
        overflow: new OverflowDetector(rt.config.OVERFLOW_EVENTS_PER_SECOND),
        projectByToken,
      }),
    )
    return undefined
  },
}

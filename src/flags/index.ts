import type { Project } from '../accounts/documents.ts'
import type { AccountStore } from '../accounts/store.ts'
import type { Component } from '../runtime/types.ts'
import { flagCacheFor } from './cache.ts'
import { PersonMirror } from './person-mirror.ts'
import { GroupTypeCache } from './properties.ts'
import { FlagQuota } from './quota.ts'
import { FLAGS_BODY_LIMIT, registerEvaluationRoutes } from './evaluation-routes.ts'
import { sdkConfigFields } from '../remote-config/flags-fields.ts'
import { cohortDocsFor } from '../cohorts/cache.ts'
import { CohortMembership } from '../cohorts/members.ts'

const NEGATIVE_TTL_MS = 2000

// Project tokens never change once issued, so a found project is kept for the process; an unknown
// token is remembered briefly so a misconfigured SDK cannot hammer the config bucket.
function tokenLookup(store: AccountStore): (token: string) => Promise<Project | undefined> {
  const known = new Map<string, Project>()
  const unknown = new Map<string, number>()
  return async (token) => {
    const hit = known.get(token)
    if (hit) return hit
    if ((unknown.get(token) ?? 0) > Date.now()) return undefined
    const p = await store.projectByToken(token)
    if (p) known.set(token, p)
    else {
      if (unknown.size > 10_000) unknown.clear()
      unknown.set(token, Date.now() + NEGATIVE_TTL_MS)
    }
    return p
  }
}

/** POST /decide and /flags. They are called as often as capture, so they run (and scale) with it. */
export const flagsComponent: Component = {
  name: 'flags',
  roles: ['capture'],
  async start(rt, app) {
    const cache = await flagCacheFor(rt.nc, rt.log)
    // Not read at start: the IPv4 database is 63 MiB of RSS, and a stack whose clients are all
    // local never needs it. The first request from a public address pays ~100 ms to read it.
    const persons = new PersonMirror(rt.ch, rt.log)
    persons.start(rt.nc)
    const cohorts = { docs: await cohortDocsFor(rt.nc, rt.log), membership: new CohortMembership(rt.ch) }
    await app.register(async (scope) =>
      registerEvaluationRoutes(scope, {
        cache,
        ch: rt.ch,
        groupTypes: new GroupTypeCache(rt.ch),
        log: rt.log,
        persons,
        cohorts,
        quota: new FlagQuota(rt.config.FLAGS_QUOTA_PER_MINUTE),
        maxDecompressedBytes: Math.min(rt.config.CAPTURE_MAX_BODY_BYTES, FLAGS_BODY_LIMIT) * 5,
        projectByToken: tokenLookup(rt.accounts),
        remoteConfig: sdkConfigFields(rt, cache),
      }),
    )
    return {
      async stop() {
        cache.stop()
        persons.stop()
      },
    }
  },
}

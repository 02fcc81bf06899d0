import { type KV, KvWatchInclude } from '@nats-io/kv'
import type { Project } from '../accounts/documents.ts'
import type { AccountStore } from '../accounts/store.ts'
import type { FlagCache } from '../flags/cache.ts'
import type { NatsConnection } from '../jetstream/connection.ts'
import type { Logger } from '../observability/logger.ts'
import { surveyTeam } from '../surveys/document.ts'
import { surveyApiBody } from '../surveys/serialize.ts'
import type { SurveyStore } from '../surveys/store.ts'
import { buildRemoteConfig, type Json, type RemoteConfig } from './build.ts'
import { type ClientHeaders, clientConfig, configJs, onPermittedDomain, recordingDomains } from './serve.ts'

// The remote config of each project, built once and kept until something it is made of changes:
// the project document (a watch on the config bucket), the project's flags (the flag cache's
// change feed) or its surveys (a watch on the surveys bucket). Every process keeps its own copy
// and hears every change, so no process serves a stale document for longer than a watch event
// takes. Each entry holds the bodies ready to send, so a request costs a map lookup.

const NEGATIVE_TTL_MS = 2000
const RESTART_DELAY_MS = 500

/** A client document ready to send: as an object, as JSON text and as config.js. */
export interface Served {
  config: RemoteConfig
  json: string
  js: string
}

/** A project's cached remote config: one variant for allowed origins, one for the others. */
export interface ConfigEntry {
  project: Project
  /** the full document, before sanitizing (tests and /flags read it) */
  document: RemoteConfig
  /** session recording domains; empty when every origin may record */
  domains: string[]
  allowed: Served
  /** what origins off the domain list get; null when there is no list */
  denied: Served | null
}

/** The public survey list of a project, as /api/surveys/ answers it. */
export interface SurveyList {
  surveys: Json[]
  survey_config: Json
}

/** The variant of `entry` for a request with these headers (the recording domain check). */
export function variantFor(entry: ConfigEntry, headers: ClientHeaders): Served {
  return entry.denied && !onPermittedDomain(entry.domains, headers) ? entry.denied : entry.allowed
}

function served(project: Project, document: RemoteConfig, permitted: boolean): Served {
  const config = clientConfig(document, permitted)
  return { config, json: JSON.stringify(config), js: configJs(project.api_token, config) }
}

/** What the cache is built from. */
export interface CacheDeps {
  nc: NatsConnection
  accounts: AccountStore
  flags: FlagCache
  surveys: SurveyStore
  log: Logger
}

export class RemoteConfigCache {
  private readonly entries = new Map<number, Promise<ConfigEntry | undefined>>()
  private readonly surveyLists = new Map<number, Promise<SurveyList>>()
  private readonly tokens = new Map<string, number>()
  private readonly unknownTokens = new Map<string, number>()
  private readonly stops: (() => void)[] = []
  private stopped = false

  private constructor(
    private readonly accounts: AccountStore,
    private readonly flags: FlagCache,
    private readonly surveys: SurveyStore,
    private readonly log: Logger,
  ) {}

  /** Starts the watches; resolves once they run, so no change after this is missed. */
  static async start(deps: CacheDeps): Promise<RemoteConfigCache> {
    const cache = new RemoteConfigCache(deps.accounts, deps.flags, deps.surveys, deps.log)
    // The watches live as long as the connection they run on.
    void deps.nc.closed().then(() => cache.stop())
    cache.stops.push(deps.flags.onChange((team) => cache.invalidate(team)))
    await cache.watch(deps.accounts.kv, 'project.*', (key) => {
      const m = /^project\.(\d+)$/.exec(key)
      return m ? Number(m[1]) : null
    })
    await cache.watch(deps.surveys.kv, 'survey.*.*', surveyTeam)
    return cache
  }

  stop(): void {
    this.stopped = true
    for (const s of this.stops.splice(0)) s()
  }

  /** Forgets what was built for a project; the next request builds it again. */
  invalidate(projectId: number): void {
    this.entries.delete(projectId)
    this.surveyLists.delete(projectId)
  }

  /** The project of a token, or undefined (remembered briefly, so unknown tokens cost little). */
  async projectIdOf(token: string): Promise<number | undefined> {
    const known = this.tokens.get(token)
    if (known !== undefined) return known
    if ((this.unknownTokens.get(token) ?? 0) > Date.now()) return undefined
    const project = await this.accounts.projectByToken(token)
    if (!project) {
      if (this.unknownTokens.size > 10_000) this.unknownTokens.clear()
      this.unknownTokens.set(token, Date.now() + NEGATIVE_TTL_MS)
      return undefined
    }
    // Tokens never change once issued.
    this.tokens.set(token, project.id)
    return project.id
  }

  async forToken(token: string): Promise<ConfigEntry | undefined> {
    const id = await this.projectIdOf(token)
    return id === undefined ? undefined : this.forProject(id)
  }

  forProject(projectId: number): Promise<ConfigEntry | undefined> {
    let entry = this.entries.get(projectId)
    if (!entry) {
      entry = this.build(projectId)
      this.entries.set(projectId, entry)
      // A failed build is not kept: the next request tries again.
      entry.catch(() => this.entries.get(projectId) === entry && this.entries.delete(projectId))
    }
    return entry
  }

  surveysFor(project: Project): Promise<SurveyList> {
    let list = this.surveyLists.get(project.id)
    if (!list) {
      list = this.buildSurveys(project)
      this.surveyLists.set(project.id, list)
      list.catch(() => this.surveyLists.get(project.id) === list && this.surveyLists.delete(project.id))
    }
    return list
  }

  private async buildSurveys(project: Project): Promise<SurveyList> {
    const byId = new Map(this.flags.flags(project.id).map((f) => [f.id, f]))
    const lookup = (id: number | null) => (id === null ? undefined : byId.get(id))
    const surveys = (await this.surveys.list(project.id))
      .filter((s) => !s.archived)
      .map((s) => surveyApiBody(s, lookup) as Json)
    return { surveys, survey_config: (project.settings.survey_config as Json) ?? null }
  }

  private async build(projectId: number): Promise<ConfigEntry | undefined> {
    const project = await this.accounts.getProject(projectId)
    if (!project) return undefined
    const hasFeatureFlags = this.flags.flags(projectId).some((f) => f.active && !f.deleted)
    const { surveys } = await this.surveysFor(project)
    const document = buildRemoteConfig(project, { hasFeatureFlags, surveys })
    const domains = recordingDomains(document)
    return {
      project,
      document,
      domains,
      allowed: served(project, document, true),
      denied: domains.length ? served(project, document, false) : null,
    }
  }

  // Watches `filter` for changes from now on; a change to a key invalidates its project. If the
  // watch ends, everything is dropped (changes may have been missed) and the watch starts again.
  private async watch(kv: KV, filter: string, projectOf: (key: string) => number | null): Promise<void> {
    if (this.stopped) return
    const iter = await kv.watch({ key: filter, include: KvWatchInclude.UpdatesOnly })
    this.stops.push(() => iter.stop())
    void (async () => {
      try {
        for await (const e of iter) {
          const id = projectOf(e.key)
          if (id !== null) this.invalidate(id)
        }
      } catch (err) {
        this.log.warn({ err, filter }, 'remote config watch failed')
      }
      if (this.stopped) return
      this.entries.clear()
      this.surveyLists.clear()
      setTimeout(() => {
        this.watch(kv, filter, projectOf).catch((err) =>
          this.log.error({ err }, 'remote config watch restart failed'),
        )
      }, RESTART_DELAY_MS)
    })()
  }
}

// One cache per NATS connection (that is, per process), shared by the public routes and the flag
// endpoints; it stops when the connection closes.
const shared = new WeakMap<NatsConnection, Promise<RemoteConfigCache>>()

/** The process's remote config cache, started on first use. */
export function remoteConfigCacheFor(deps: CacheDeps): Promise<RemoteConfigCache> {
  let cache = shared.get(deps.nc)
  if (!cache) {
    cache = RemoteConfigCache.start(deps)
    shared.set(deps.nc, cache)
    cache.catch(() => shared.delete(deps.nc))
  }
  return cache
}

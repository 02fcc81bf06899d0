import type { FastifyRequest } from 'fastify'
import type { PersonalKey, Project, User } from '../accounts/documents.ts'
import type { AccountStore } from '../accounts/store.ts'
import { AuthenticationError, NotFound, PermissionDenied, Throttled, ValidationError } from './errors.ts'

export interface Principal {
  key: PersonalKey
  user: User
}

/** `:write` implies `:read`; `*` grants everything. */
export function hasScope(granted: string[], required: string): boolean {
  if (granted.includes('*') || granted.includes(required)) return true
  const [resource, action] = required.split(':')
  return action === 'read' && granted.includes(`${resource}:write`)
}

/**
 * Whether a browser sent the request from a page of another site: an Origin other than this
 * server's, or Fetch Metadata saying so. A key in a URL can leak (history, logs, Referer), and a
 * page that holds one must not be able to use it from elsewhere; SDKs and curl send neither header,
 * and the console's own event stream (EventSource cannot set headers) is same-origin.
 */
export function fromAnotherSite(req: FastifyRequest): boolean {
  const site = req.headers['sec-fetch-site']
  if (site === 'cross-site' || site === 'same-site') return true
  const origin = req.headers.origin
  if (origin === undefined) return false
  try {
    return new URL(origin).host !== req.headers.host
  } catch {
    return true
  }
}

/** Reads `Authorization: Bearer phx_…` (or `?personal_api_key=`, never from another site's page) and returns the key's owner. */
export async function authenticate(req: FastifyRequest, store: AccountStore): Promise<Principal> {
  const header = req.headers.authorization
  let raw: string | undefined
  if (header) {
    const m = /^Bearer\s+(\S+)$/i.exec(header)
    if (!m) throw new AuthenticationError('Authorization header must be "Bearer <personal API key>".')
    raw = m[1]
  } else {
    const q = req.query as Record<string, unknown> | undefined
    if (typeof q?.personal_api_key === 'string') {
      if (fromAnotherSite(req)) {
        throw new AuthenticationError(
          'A personal API key is not accepted in the query string of a request from another site; send it as "Authorization: Bearer <key>".',
        )
      }
      raw = q.personal_api_key
    }
  }
  if (!raw) throw new AuthenticationError('Authentication credentials were not provided.')
  const key = await store.authKey(raw)
  if (!key) throw new AuthenticationError('Personal API key is invalid.', 'authentication_failed')
  const user = await store.authUser(key.user_id)
  if (!user) throw new AuthenticationError('Personal API key is invalid.', 'authentication_failed')
  return { key, user }
}

/** Throws 403 naming `scope` unless the key has it. */
export function requireScope(p: Principal, scope: string): void {
  if (!hasScope(p.key.scopes, scope)) {
    throw new PermissionDenied(`API key missing required scope '${scope}'`, 'permission_denied')
  }
}

/**
 * Throws 403 for a key limited to some projects: such a key reaches project-based endpoints only,
 * never the organization (PostHog's rule and message, posthog/permissions.py).
 */
export function requireOrganizationWide(p: Principal): void {
  if (p.key.projects !== null) {
    throw new PermissionDenied('API keys with scoped projects are only supported on project-based endpoints.')
  }
}

const PROJECT_ID = /^\d{1,12}$/

/**
 * The read of project `rawId` started before its caller is authenticated (beside the key's read),
 * so that a request waits for one round trip fewer; projectFor uses its answer only for a valid
 * key. Undefined for an id projectFor refuses.
 */
export function readProjectEarly(
  rawId: string,
  store: AccountStore,
): Promise<Project | undefined> | undefined {
  if (!PROJECT_ID.test(rawId)) return undefined
  const read = store.authProject(Number(rawId))
  read.catch(() => undefined) // seen by projectFor, or dropped with a refused key
  return read
}

/**
 * A project the key may reach; any other id (unknown, other organization, not listed) is a 404.
 * `early`: readProjectEarly's read of the same id.
 */
export async function projectFor(
  p: Principal,
  rawId: string,
  store: AccountStore,
  early?: Promise<Project | undefined>,
): Promise<Project> {
  if (!PROJECT_ID.test(rawId)) throw new ValidationError('project_id must be an integer.', 'project_id')
  const id = Number(rawId)
  const project = await (early ?? store.authProject(id))
  if (!project || !canSee(p, project)) throw new NotFound('Project not found.')
  return project
}

/** Whether the key may reach `project`: same organization, and listed if the key lists projects. */
export function canSee(p: Principal, project: Project): boolean {
  if (project.organization_id !== p.user.organization_id) return false
  return p.key.projects === null || p.key.projects.includes(project.id)
}

/** Per-key fixed-window limiter; enough for one api process (each process counts its own). */
export class RateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>()
  constructor(private readonly perMinute: number) {}

  check(keyId: string, now = Date.now()): void {
    if (this.perMinute <= 0) return
    const w = this.windows.get(keyId)
    if (!w || now - w.start >= 60_000) {
      if (this.windows.size > 50_000) this.windows.clear()
      this.windows.set(keyId, { start: now, count: 1 })
      return
    }
    w.count++
    if (w.count > this.perMinute) throw new Throttled(Math.ceil((w.start + 60_000 - now) / 1000))
  }
}

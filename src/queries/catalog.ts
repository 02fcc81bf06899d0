import { createHash } from 'node:crypto'
import { actionDocsFor } from '../actions/cache.ts'
import { actionCondition } from '../actions/expr.ts'
import { cohortDocsFor } from '../cohorts/cache.ts'
import type { Cohort } from '../cohorts/document.ts'
import type { HogQLCatalog } from '../hogql/index.ts'
import type { NatsConnection } from '../jetstream/connection.ts'
import type { Logger } from '../observability/logger.ts'
import { withCatalog } from './compile-cache.ts'

// The catalog a project's queries compile with (src/hogql/catalog.ts): its live cohorts, with the
// version whose members are current, and its live actions as HogQL conditions. Built from the
// watched definitions, once per change of either; its key is part of every compile cache key, so
// a changed action or a new cohort version never reuses a statement compiled before.

interface Built {
  catalog: HogQLCatalog
  cohorts: number
  actions: number
}

const EMPTY: HogQLCatalog = { key: 'empty', cohorts: [], actions: [] }

/** The catalog entry of a cohort (also used where a just-read document is newer than the watch). */
export function catalogCohort(c: Cohort): HogQLCatalog['cohorts'][number] {
  return { id: c.id, name: c.name, static: c.is_static, version: c.version }
}

export class Catalogs {
  private readonly built = new Map<number, Built>()

  private constructor(
    private readonly cohorts: Awaited<ReturnType<typeof cohortDocsFor>>,
    private readonly actions: Awaited<ReturnType<typeof actionDocsFor>>,
    private readonly log: Pick<Logger, 'warn'>,
  ) {
    cohorts.onChange((team) => this.built.delete(team))
    actions.onChange((team) => this.built.delete(team))
  }

  static async open(nc: NatsConnection, log: Logger): Promise<Catalogs> {
    return new Catalogs(await cohortDocsFor(nc, log), await actionDocsFor(nc, log), log)
  }

  /** The project's catalog (the same object until one of its cohorts or actions changes). */
  get(teamId: number): HogQLCatalog {
    const hit = this.built.get(teamId)
    if (hit) return hit.catalog
    const cohorts = this.cohorts
      .list(teamId)
      .filter((c) => !c.deleted)
      .map(catalogCohort)
    const actions = this.actions
      .list(teamId)
      .filter((a) => !a.deleted)
      .map((a) => {
        let expr: string
        try {
          expr = actionCondition(a)
        } catch (err) {
          // refused when written; one stored before a rule tightened matches nothing
          this.log.warn({ err, action_id: a.id }, 'action cannot be matched; it matches no event')
          expr = '0'
        }
        return { id: a.id, name: a.name, expr }
      })
    if (!cohorts.length && !actions.length) return EMPTY
    const key = createHash('sha256')
      .update(JSON.stringify([cohorts, actions]))
      .digest('hex')
      .slice(0, 32)
    const catalog = { key, cohorts, actions }
    this.built.set(teamId, { catalog, cohorts: cohorts.length, actions: actions.length })
    return catalog
  }
}

const shared = new WeakMap<NatsConnection, Promise<Catalogs>>()

/** The catalogs of a process's connection (one per connection, shared). */
export function catalogsFor(nc: NatsConnection, log: Logger): Promise<Catalogs> {
  let c = shared.get(nc)
  if (!c) {
    c = Catalogs.open(nc, log)
    shared.set(nc, c)
    c.catch(() => shared.delete(nc))
  }
  return c
}

/**
 * Runs `fn` with the project's catalog for every HogQL compile within it (person lists and
 * exports, which compile outside the query runner).
 */
export async function withProjectCatalog<T>(
  rt: { nc: NatsConnection; log: Logger },
  teamId: number,
  fn: () => Promise<T>,
): Promise<T> {
  const catalog = (await catalogsFor(rt.nc, rt.log)).get(teamId)
  return withCatalog(catalog, fn)
}

import type { Project } from '../accounts/documents.ts'
import { ActionStore } from '../actions/store.ts'
import { FlagStore } from '../flags/definition-store.ts'
import type { HogQLCatalog } from '../hogql/index.ts'
import { NotFound, ValidationError } from '../http/errors.ts'
import type { Logger } from '../observability/logger.ts'
import { catalogCohort, type Catalogs } from '../queries/catalog.ts'
import type { Runtime } from '../runtime/types.ts'
import type { CohortWrite } from './body.ts'
import type { CohortDocs } from './cache.ts'
import type { CohortCalculator } from './calculator.ts'
import { type Cohort, cohortRefs, type Filters, groupsToFilters } from './document.ts'
import { type IdKind, parseCohortCsv, type StaticMembers } from './static.ts'
import type { CohortStore } from './store.ts'
import { flagCohortIds } from './flag-match.ts'
import { type CohortWorld, validateFilters } from './validate.ts'

// What the cohort endpoints do, apart from HTTP: validating and storing definitions, asking for
// calculations, changing static members. Everything slow happens in the background; these
// return as soon as the cohort document is written.

const EMPTY: Filters = { properties: { type: 'AND', values: [] } }

export class CohortService {
  private readonly flags: Promise<FlagStore>
  private readonly actions: Promise<ActionStore>

  constructor(
    private readonly rt: Runtime,
    readonly store: CohortStore,
    readonly docs: CohortDocs,
    readonly calculator: CohortCalculator,
    readonly statics: StaticMembers,
    private readonly catalogs: Catalogs,
    private readonly log: Logger,
  ) {
    this.flags = FlagStore.open(rt.nc)
    this.actions = ActionStore.open(rt.nc)
    this.flags.catch(() => undefined)
    this.actions.catch(() => undefined)
  }

  /** The project's catalog with `c` as just read (the watch may not have it yet). */
  catalogWith(team: number, c: Cohort): HogQLCatalog {
    const base = this.catalogs.get(team)
    const cohorts = [...base.cohorts.filter((x) => x.id !== c.id), catalogCohort(c)]
    return { ...base, key: `${base.key}+${c.id}.${c.version}.${c.is_static}`, cohorts }
  }

  /**
   * What validating `filters` may look up: the cohorts it names read from the bucket (a cohort made
   * a moment ago may not have reached the watch), the rest from the watch; the actions likewise.
   */
  private async world(team: number, raw: unknown): Promise<CohortWorld> {
    const cohortIds = new Set<number>()
    const actionIds = new Set<number>()
    const walk = (v: unknown) => {
      if (!v || typeof v !== 'object') return
      const o = v as Record<string, unknown>
      if (Array.isArray(o.values)) o.values.forEach(walk)
      if (o.type === 'cohort' || o.type === 'static-cohort' || o.type === 'precalculated-cohort')
        cohortIds.add(Number(o.value))
      if (o.type === 'behavioral') {
        if (o.event_type === 'actions') actionIds.add(Number(o.key))
        if (o.seq_event_type === 'actions') actionIds.add(Number(o.seq_event))
      }
    }
    walk((raw as { properties?: unknown } | null)?.properties)
    const read = new Map<number, Cohort>()
    await Promise.all(
      [...cohortIds].filter(Number.isSafeInteger).map(async (id) => {
        const c = await this.store.get(team, id).catch(() => undefined)
        if (c) read.set(id, c)
      }),
    )
    const actions = await this.actions
    const liveActions = new Set<number>()
    await Promise.all(
      [...actionIds].filter(Number.isSafeInteger).map(async (id) => {
        const a = await actions.get(team, id).catch(() => undefined)
        if (a && !a.deleted) liveActions.add(id)
      }),
    )
    return {
      cohort: (id) => read.get(id) ?? this.docs.get(team, id),
      actionExists: (id) => liveActions.has(id),
    }
  }

  /** The stored definition of a dynamic cohort from what the client sent. */
  private async definition(team: number, body: CohortWrite, self?: number): Promise<Filters> {
    if (body.filters !== undefined && body.filters !== null) {
      return validateFilters(body.filters, self, await this.world(team, body.filters))
    }
    if (body.groups?.length) {
      let raw: unknown
      try {
        raw = groupsToFilters(body.groups)
      } catch {
        throw new ValidationError('Invalid groups.', 'groups')
      }
      return validateFilters(raw, self, await this.world(team, raw))
    }
    return EMPTY
  }

  private members(body: CohortWrite, isStatic: boolean): { kind: IdKind; ids: string[] } | undefined {
    if (body.csv !== undefined) {
      if (!isStatic)
        throw new ValidationError('A CSV upload makes a static cohort: set is_static to true.', 'csv')
      return parseCohortCsv(body.csv)
    }
    if (body._create_static_person_ids !== undefined) {
      if (!isStatic)
        throw new ValidationError(
          'Only a static cohort takes a list of persons.',
          '_create_static_person_ids',
        )
      return { kind: 'person_id', ids: body._create_static_person_ids }
    }
    return undefined
  }

  async create(project: Project, body: CohortWrite, userId: number): Promise<Cohort> {
    const isStatic = body.is_static ?? false
    if (body.query !== undefined && body.query !== null) {
      throw new ValidationError(
        isStatic
          ? 'Cohorts from a query are not supported; upload a CSV or give person ids.'
          : 'Cannot create a dynamic cohort with a query. Set is_static to true.',
        'query',
      )
    }
    const filters = isStatic ? null : await this.definition(project.id, body)
    const members = this.members(body, isStatic)
    let c = await this.store.create(
      project.id,
      {
        name: body.name ?? null,
        description: body.description ?? '',
        filters,
        groups: body.groups ?? [],
        is_static: isStatic,
        cohort_type: body.cohort_type ?? null,
      },
      userId,
    )
    if (members) {
      c = await this.store.change(project.id, c.id, (cur) => ({ ...cur, is_calculating: true }))
      this.statics.change(project, c, members.kind, members.ids)
    } else if (!isStatic) this.calculator.kick()
    // answered once this process's queries see it (read-your-writes: `IN COHORT` right after)
    await this.docs.caughtUp()
    return c
  }

  async update(project: Project, id: number, body: CohortWrite): Promise<Cohort> {
    const cur = await this.store.get(project.id, id)
    if (body.query !== undefined && body.query !== null) {
      throw new ValidationError('Cohorts from a query are not supported.', 'query')
    }
    const isStatic = body.is_static ?? cur.is_static
    const deleting = body.deleted === true && !cur.deleted
    const restoring = body.deleted === false && cur.deleted
    if (deleting) await this.checkUnused(project.id, cur)
    const redefined =
      body.filters !== undefined ||
      body.groups !== undefined ||
      (body.is_static !== undefined && isStatic !== cur.is_static)
    const filters = isStatic
      ? cur.filters
      : redefined
        ? await this.definition(project.id, body, id)
        : (cur.filters ?? EMPTY)
    const members = this.members(body, isStatic)
    let next = await this.store.change(project.id, id, (c) => ({
      ...c,
      ...(body.name !== undefined ? { name: body.name } : {}),
      ...(body.description !== undefined ? { description: body.description } : {}),
      ...(body.groups !== undefined ? { groups: body.groups } : {}),
      ...(body.cohort_type !== undefined ? { cohort_type: body.cohort_type } : {}),
      ...(body.deleted !== undefined ? { deleted: body.deleted } : {}),
      is_static: isStatic,
      filters,
      ...(isStatic && !cur.is_static ? { is_calculating: false, pending_version: null, count: 0 } : {}),
    }))
    if (deleting && !next.is_static) await this.calculator.dropAll(project.id, id)
    if (!next.deleted && !next.is_static && (redefined || restoring))
      next = await this.calculator.request(project.id, id)
    if (!next.deleted && members) {
      next = await this.store.change(project.id, id, (c) => ({ ...c, is_calculating: true }))
      this.statics.change(project, next, members.kind, members.ids)
    }
    if ((deleting || restoring || redefined) && !members) {
      for (const dependent of this.calculator.dependents(project.id, id)) {
        await this.calculator.request(project.id, dependent).catch(() => undefined)
      }
    }
    await this.docs.caughtUp()
    return next
  }

  /** PostHog refuses to delete a cohort active flags use; Burrow also one other cohorts contain. */
  private async checkUnused(team: number, c: Cohort): Promise<void> {
    const flags = (await (await this.flags).list(team)).filter(
      (f) => f.active && !f.deleted && flagCohortIds(f.filters).includes(c.id),
    )
    if (flags.length) {
      throw new ValidationError(
        `This cohort is used in ${flags.length} active feature flag(s): ${flags.map((f) => f.name || f.key).join(', ')}. ` +
          'Please remove the cohort from these feature flags before deleting it.',
        'deleted',
      )
    }
    const containing = this.docs
      .list(team)
      .filter(
        (o) => !o.deleted && o.id !== c.id && o.filters && cohortRefs(o.filters.properties).includes(c.id),
      )
    if (containing.length) {
      throw new ValidationError(
        `This cohort is part of other cohorts: ${containing.map((o) => o.name ?? `#${o.id}`).join(', ')}. Remove it from them before deleting it.`,
        'deleted',
      )
    }
  }

  /** A static copy of a dynamic cohort's current members (PostHog's duplicate_as_static_cohort). */
  async duplicateAsStatic(project: Project, id: number, userId: number): Promise<Cohort> {
    const from = await this.store.get(project.id, id)
    if (from.deleted) throw new NotFound()
    if (from.is_static) throw new ValidationError('Cannot duplicate a static cohort as a static cohort.')
    let copy = await this.store.create(
      project.id,
      {
        name: `${from.name ?? ''} (static copy)`,
        description: from.description,
        filters: null,
        groups: [],
        is_static: true,
        cohort_type: null,
      },
      userId,
    )
    copy = await this.store.change(project.id, copy.id, (c) => ({ ...c, is_calculating: true }))
    this.statics.copy(project, copy, from)
    await this.docs.caughtUp()
    return copy
  }
}

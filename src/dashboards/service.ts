import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Project } from '../accounts/documents.ts'
import { userResolver } from '../accounts/user-body.ts'
import type { ApiContext, ProjectAccess } from '../http/routes.ts'
import { ValidationError } from '../http/errors.ts'
import { queryKind } from '../queries/kinds.ts'
import type { QueryRunner } from '../queries/runner.ts'
import type { RefreshMode } from '../queries/schema.ts'
import { WRAPPER_KINDS } from './filters.ts'
import { runnableQuery } from './results.ts'
import type { ServeContext } from './serialize.ts'
import { type Dashboard, DashboardStore, type Insight, type Tile } from './store.ts'

// What the insight, dashboard and sharing routes share: the store, the runner, and the rules that
// cross an insight and its dashboards (its `dashboards` list is the tiles that show it).

export class DashboardsService {
  private constructor(
    readonly ctx: ApiContext,
    readonly store: DashboardStore,
    readonly runner: QueryRunner,
  ) {}

  static async open(ctx: ApiContext, runner: QueryRunner): Promise<DashboardsService> {
    return new DashboardsService(ctx, await DashboardStore.open(ctx.rt.nc), runner)
  }

  /** How many tiles of one dashboard are calculated at once: what one key may run at once. */
  get width(): number {
    const c = this.ctx.rt.config
    return Math.max(1, Math.min(c.QUERY_MAX_CONCURRENT_PER_KEY, c.QUERY_MAX_CONCURRENT_PER_PROJECT))
  }

  serveContext(
    req: FastifyRequest,
    project: Project,
    keyId: string,
    mode: RefreshMode,
    shared = false,
  ): ServeContext {
    return {
      project,
      runner: this.runner,
      users: userResolver(this.ctx.rt.accounts),
      mode,
      as: { keyId, log: req.log },
      shared,
      width: this.width,
    }
  }

  access(req: FastifyRequest, a: ProjectAccess, mode: RefreshMode): ServeContext {
    return this.serveContext(req, a.project, a.principal.key.id, mode)
  }

  /**
   * Checks a saved query: a wrapper node (InsightVizNode, DataVisualizationNode, DataTableNode) or a
   * query, around a kind Burrow answers, compiled once now so that a query that cannot run is a 400
   * when it is saved rather than an error on every dashboard that shows it. null: no query.
   */
  async checkQuery(query: unknown, project: Project): Promise<void> {
    if (query === null || query === undefined) return
    if (typeof query !== 'object' || Array.isArray(query)) {
      throw new ValidationError('query must be a query node (an object with a kind).', 'query')
    }
    const kind = (query as { kind?: unknown }).kind
    const source = runnableQuery(query)
    if (!source) {
      throw new ValidationError(
        (WRAPPER_KINDS as readonly unknown[]).includes(kind)
          ? `${String(kind)} needs a source query with a kind.`
          : 'query must have a kind.',
        'query',
      )
    }
    await queryKind(source.kind).compile(source, project)
  }

  /** The project's insights (soft-deleted ones included) by id, and its dashboards. */
  async team(team: number): Promise<{ insights: Map<number, Insight>; dashboards: Dashboard[] }> {
    const [insights, dashboards] = await Promise.all([this.store.insights(team), this.store.dashboards(team)])
    return { insights: new Map(insights.map((i) => [i.id, i])), dashboards }
  }

  /**
   * Makes the insight shown on exactly `ids` of the project's live dashboards (PostHog's
   * `_update_insight_dashboards`): a tile is added where it is missing (or a removed one restored)
   * and removed from the others. Deleted dashboards in `ids` are ignored; an id that is not one of
   * the project's dashboards is a 400.
   */
  async setInsightDashboards(team: number, insightId: number, ids: number[]): Promise<void> {
    const dashboards = await this.store.dashboards(team)
    const byId = new Map(dashboards.map((d) => [d.id, d]))
    for (const id of ids) if (!byId.has(id)) throw new ValidationError('Dashboard not found', 'dashboards')
    const wanted = new Set(ids.filter((id) => !byId.get(id)!.deleted))
    for (const d of dashboards) {
      const shows = d.tiles.some((t) => t.insight_id === insightId && !t.deleted)
      if (shows === wanted.has(d.id)) continue
      // (tiles are never removed from the document, only marked deleted: one missing now stays missing)
      const tileId =
        wanted.has(d.id) && !d.tiles.some((t) => t.insight_id === insightId)
          ? await this.store.nextId('tile')
          : 0
      await this.store.changeDashboard(team, d.id, (cur) => {
        const has = cur.tiles.find((t) => t.insight_id === insightId)
        if (wanted.has(d.id)) {
          if (has) return { ...cur, tiles: cur.tiles.map((t) => (t === has ? { ...t, deleted: false } : t)) }
          return { ...cur, tiles: [...cur.tiles, newTile(tileId, insightId, null, cur.tiles)] }
        }
        if (!has || has.deleted) return undefined
        return {
          ...cur,
          tiles: cur.tiles.map((t) => (t.insight_id === insightId ? { ...t, deleted: true } : t)),
        }
      })
    }
  }

  /** Removes the insight's tiles from every dashboard (a soft-deleted insight is shown nowhere). */
  async removeFromDashboards(team: number, insightId: number): Promise<void> {
    for (const d of await this.store.dashboards(team)) {
      if (!d.tiles.some((t) => t.insight_id === insightId && !t.deleted)) continue
      await this.store.changeDashboard(team, d.id, (cur) => ({
        ...cur,
        tiles: cur.tiles.map((t) => (t.insight_id === insightId ? { ...t, deleted: true } : t)),
      }))
    }
  }
}

/** A new tile below the dashboard's others, half the width (PostHog's default 6 × 5 of 12 columns). */
export function newTile(id: number, insightId: number | null, text: Tile['text'], others: Tile[]): Tile {
  const live = others.filter((t) => !t.deleted)
  const bottom = live.reduce((y, t) => {
    const sm = (t.layouts.sm ?? {}) as { y?: number; h?: number }
    return Math.max(y, (sm.y ?? 0) + (sm.h ?? 5))
  }, 0)
  const n = live.length
  return {
    id,
    insight_id: insightId,
    text,
    layouts: { sm: { x: (n % 2) * 6, y: n % 2 ? Math.max(0, bottom - 5) : bottom, w: 6, h: 5 } },
    color: null,
    filters_overrides: {},
    show_description: null,
    transparent_background: null,
    deleted: false,
  }
}

/** PostHog's answer to a DELETE of an insight or dashboard (ForbidDestroyModel): soft delete only. */
export const refuseHardDelete = (reply: FastifyReply) =>
  reply.code(405).send({
    type: 'invalid_request',
    code: 'method_not_allowed',
    detail: 'This model does not support hard deletion. Use soft delete instead.',
    attr: null,
  })

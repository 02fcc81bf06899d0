import { randomBytes, randomInt } from 'node:crypto'
import type { KV } from '@nats-io/kv'
import { z } from 'zod'
import { BUCKETS } from '../../schema/jetstream.ts'
import { bucket, type NatsConnection } from '../jetstream/connection.ts'
import {
  createDoc,
  deleteDoc,
  listDocs,
  nextSequence,
  putDoc,
  readDoc,
  replaceDoc,
  updateDoc,
} from '../jetstream/kv-document.ts'

// Saved insights, dashboards and sharing configurations in the `burrow_dashboards` KV bucket:
//   i.<team>.<id>             an insight
//   d.<team>.<id>             a dashboard, its tiles inside (one document: adding, moving or
//                             removing a tile is one revision-checked write of its dashboard)
//   s.<team>.<kind>.<id>      the sharing configuration of a dashboard or an insight (kind d / i)
//   t.<access token>          which sharing configuration a public token names
//   seq.<insight|dashboard|tile|text>  integer id counters
// Every key but the token's names its project; the token's document names it and the configuration
// it must still match (a rotated or disabled token is refused at once, on every process: each
// shared request reads these two documents).

export const InsightDoc = z.object({
  id: z.number().int(),
  short_id: z.string(),
  team_id: z.number().int(),
  name: z.string().nullable(),
  derived_name: z.string().nullable(),
  description: z.string().nullable(),
  query: z.unknown(),
  filters: z.record(z.string(), z.unknown()),
  order: z.number().int().nullable(),
  deleted: z.boolean(),
  saved: z.boolean(),
  favorited: z.boolean(),
  tags: z.array(z.string()),
  created_at: z.string(),
  created_by: z.number().int().nullable(),
  last_modified_at: z.string(),
  last_modified_by: z.number().int().nullable(),
  updated_at: z.string(),
})
export type Insight = z.infer<typeof InsightDoc>

export const TextDoc = z.object({
  id: z.number().int(),
  body: z.string().nullable(),
  created_by: z.number().int().nullable(),
  last_modified_at: z.string(),
  last_modified_by: z.number().int().nullable(),
})
export type Text = z.infer<typeof TextDoc>

export const TileDoc = z.object({
  id: z.number().int(),
  insight_id: z.number().int().nullable(),
  text: TextDoc.nullable(),
  layouts: z.record(z.string(), z.unknown()),
  color: z.string().nullable(),
  filters_overrides: z.record(z.string(), z.unknown()),
  show_description: z.boolean().nullable(),
  transparent_background: z.boolean().nullable(),
  deleted: z.boolean(),
})
export type Tile = z.infer<typeof TileDoc>

export const DashboardDoc = z.object({
  id: z.number().int(),
  team_id: z.number().int(),
  name: z.string().nullable(),
  description: z.string(),
  pinned: z.boolean(),
  deleted: z.boolean(),
  creation_mode: z.enum(['default', 'template', 'duplicate']),
  filters: z.record(z.string(), z.unknown()),
  variables: z.record(z.string(), z.unknown()),
  tags: z.array(z.string()),
  breakdown_colors: z.unknown(),
  data_color_theme_id: z.number().int().nullable(),
  created_at: z.string(),
  created_by: z.number().int().nullable(),
  last_accessed_at: z.string().nullable(),
  tiles: z.array(TileDoc),
})
export type Dashboard = z.infer<typeof DashboardDoc>

export const SharingDoc = z.object({
  created_at: z.string(),
  enabled: z.boolean(),
  access_token: z.string(),
  settings: z.record(z.string(), z.unknown()).nullable(),
})
export type Sharing = z.infer<typeof SharingDoc>

export type SharedKind = 'dashboard' | 'insight'

const TokenDoc = z.object({
  team_id: z.number().int(),
  kind: z.enum(['dashboard', 'insight']),
  id: z.number().int(),
})
export type SharedTarget = z.infer<typeof TokenDoc>

const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'
const shortId = () => Array.from({ length: 8 }, () => ALPHABET[randomInt(ALPHABET.length)]).join('')

/** PostHog's token: secrets.token_urlsafe(22), 22 random bytes in URL-safe base64 (30 characters). */
export const newAccessToken = () => randomBytes(22).toString('base64url')

/** What a token may look like: anything else names no configuration (and no KV key). */
export const isAccessToken = (s: string) => /^[A-Za-z0-9_-]{16,64}$/.test(s)

const insightKey = (team: number, id: number) => `i.${team}.${id}`
const dashboardKey = (team: number, id: number) => `d.${team}.${id}`
const sharingKey = (team: number, kind: SharedKind, id: number) => `s.${team}.${kind[0]}.${id}`
const tokenKey = (token: string) => `t.${token}`

export type InsightFields = Partial<
  Pick<
    Insight,
    | 'name'
    | 'derived_name'
    | 'description'
    | 'query'
    | 'filters'
    | 'order'
    | 'deleted'
    | 'saved'
    | 'favorited'
    | 'tags'
  >
>

export type DashboardFields = Partial<
  Pick<
    Dashboard,
    | 'name'
    | 'description'
    | 'pinned'
    | 'deleted'
    | 'filters'
    | 'variables'
    | 'tags'
    | 'breakdown_colors'
    | 'data_color_theme_id'
    | 'creation_mode'
  >
>

export class DashboardStore {
  private constructor(readonly kv: KV) {}

  static async open(nc: NatsConnection): Promise<DashboardStore> {
    return new DashboardStore(await bucket(nc, BUCKETS.dashboards))
  }

  nextId(kind: 'insight' | 'dashboard' | 'tile' | 'text'): Promise<number> {
    return nextSequence(this.kv, `seq.${kind}`)
  }

  // ---- insights ---------------------------------------------------------------------------------

  async createInsight(team: number, userId: number, fields: InsightFields): Promise<Insight> {
    const id = await this.nextId('insight')
    const now = new Date().toISOString()
    const doc: Insight = {
      id,
      short_id: shortId(),
      team_id: team,
      name: fields.name ?? null,
      derived_name: fields.derived_name ?? null,
      description: fields.description ?? null,
      query: fields.query ?? null,
      filters: fields.filters ?? {},
      order: fields.order ?? null,
      deleted: fields.deleted ?? false,
      saved: fields.saved ?? false,
      favorited: fields.favorited ?? false,
      tags: fields.tags ?? [],
      created_at: now,
      created_by: userId,
      last_modified_at: now,
      last_modified_by: userId,
      updated_at: now,
    }
    await putDoc(this.kv, insightKey(team, id), doc)
    return doc
  }

  /** Including soft-deleted ones. */
  async insight(team: number, id: number): Promise<Insight | undefined> {
    return (await readDoc(this.kv, insightKey(team, id), InsightDoc))?.doc
  }

  async insights(team: number): Promise<Insight[]> {
    return listDocs(this.kv, `i.${team}.*`, InsightDoc)
  }

  /**
   * Applies `fields`; `material` (the query, name, description…) also moves last_modified_at/by, as
   * PostHog's MATERIAL_INSIGHT_FIELDS do. Retries on conflicts.
   */
  async updateInsight(
    team: number,
    id: number,
    userId: number,
    fields: InsightFields,
    material: boolean,
  ): Promise<Insight | undefined> {
    return updateDoc(this.kv, insightKey(team, id), InsightDoc, (current) => {
      const now = new Date().toISOString()
      const next: Insight = { ...current, updated_at: now }
      for (const [k, v] of Object.entries(fields)) {
        if (v !== undefined) (next as Record<string, unknown>)[k] = v
      }
      if (material) {
        next.last_modified_at = now
        next.last_modified_by = userId
      }
      return next
    })
  }

  // ---- dashboards -------------------------------------------------------------------------------

  async createDashboard(
    team: number,
    userId: number,
    fields: DashboardFields,
    tiles: Tile[] = [],
  ): Promise<Dashboard> {
    const id = await this.nextId('dashboard')
    const doc: Dashboard = {
      id,
      team_id: team,
      name: fields.name ?? null,
      description: fields.description ?? '',
      pinned: fields.pinned ?? false,
      deleted: false,
      creation_mode: fields.creation_mode ?? 'default',
      filters: fields.filters ?? {},
      variables: fields.variables ?? {},
      tags: fields.tags ?? [],
      breakdown_colors: fields.breakdown_colors ?? [],
      data_color_theme_id: fields.data_color_theme_id ?? null,
      created_at: new Date().toISOString(),
      created_by: userId,
      last_accessed_at: null,
      tiles,
    }
    await putDoc(this.kv, dashboardKey(team, id), doc)
    return doc
  }

  async dashboard(team: number, id: number): Promise<Dashboard | undefined> {
    return (await readDoc(this.kv, dashboardKey(team, id), DashboardDoc))?.doc
  }

  async dashboards(team: number): Promise<Dashboard[]> {
    return listDocs(this.kv, `d.${team}.*`, DashboardDoc)
  }

  /** Read-modify-write of one dashboard; `change` may run several times (no side effects). */
  async changeDashboard(
    team: number,
    id: number,
    change: (d: Dashboard) => Dashboard | undefined,
  ): Promise<Dashboard | undefined> {
    return updateDoc(this.kv, dashboardKey(team, id), DashboardDoc, change)
  }

  // ---- sharing ----------------------------------------------------------------------------------

  async sharing(team: number, kind: SharedKind, id: number): Promise<Sharing | undefined> {
    return (await readDoc(this.kv, sharingKey(team, kind, id), SharingDoc))?.doc
  }

  /**
   * Creates or changes the sharing configuration of a dashboard or insight. `rotate`: a new token
   * (the old one names nothing from now on). The token's own document is written before the
   * configuration names it, and removed once no configuration does.
   */
  async share(
    team: number,
    kind: SharedKind,
    id: number,
    change: { enabled?: boolean; settings?: Record<string, unknown> | null; rotate?: boolean },
  ): Promise<Sharing> {
    for (let attempt = 0; attempt < 100; attempt++) {
      const current = await readDoc(this.kv, sharingKey(team, kind, id), SharingDoc)
      const token = !current || change.rotate ? newAccessToken() : current.doc.access_token
      const next: Sharing = {
        created_at: current?.doc.created_at ?? new Date().toISOString(),
        enabled: change.enabled ?? current?.doc.enabled ?? false,
        access_token: token,
        settings: change.settings !== undefined ? change.settings : (current?.doc.settings ?? null),
      }
      if (token !== current?.doc.access_token) {
        await putDoc(this.kv, tokenKey(token), { team_id: team, kind, id } satisfies SharedTarget)
      }
      const written = current
        ? await replaceDoc(this.kv, sharingKey(team, kind, id), next, current.revision)
        : await createDoc(this.kv, sharingKey(team, kind, id), next)
      if (!written) {
        // lost a race: the token written for this attempt names nothing
        if (token !== current?.doc.access_token) await this.dropToken(token)
        continue
      }
      if (current && token !== current.doc.access_token) await this.dropToken(current.doc.access_token)
      return next
    }
    throw new Error('too many concurrent changes to a sharing configuration')
  }

  private async dropToken(token: string): Promise<void> {
    const e = await this.kv.get(tokenKey(token))
    if (e) await deleteDoc(this.kv, tokenKey(token), e.revision)
  }

  /**
   * What a public token opens: its configuration, read now from the bucket, enabled and still
   * naming this token; undefined for anything else.
   */
  async sharedBy(token: string): Promise<{ target: SharedTarget; sharing: Sharing } | undefined> {
    if (!isAccessToken(token)) return undefined
    const target = (await readDoc(this.kv, tokenKey(token), TokenDoc))?.doc
    if (!target) return undefined
    const sharing = await this.sharing(target.team_id, target.kind, target.id)
    if (!sharing || !sharing.enabled || sharing.access_token !== token) return undefined
    return { target, sharing }
  }
}

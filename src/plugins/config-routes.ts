import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { NotFound, ValidationError } from '../http/errors.ts'
import { pluginById, pluginByName } from './builtins.ts'
import { fetchPluginLogs } from './log-query.ts'
import { PluginLogWriter } from './log-writer.ts'
import { PluginConfigStore } from './config-store.ts'
import { LOG_SOURCES, LOG_TYPES, type LogType, type PluginConfig } from './types.ts'
import { type ApiContext, projectRoute } from '../http/routes.ts'
import { envelope, PageQuery, paginate } from '../http/paging.ts'

// Plugin configs (the per-project pipeline steps, src/plugins/) and their log
// (spec: "Plugin configuration logs"). Config changes are themselves logged as SYSTEM lines.

const READ = 'plugin:read'
const WRITE = 'plugin:write'
const TAGS = ['plugin_configs']

const Settings = z.record(z.string(), z.unknown())

const Create = z.object({
  /** built-in plugin id (1 geoip, 2 property-filter, 3 webhook) or its name */
  plugin: z.union([z.number().int(), z.string()]),
  name: z.string().max(400).nullable().optional(),
  enabled: z.boolean().default(true),
  order: z.number().int().min(0).optional(),
  config: Settings.default({}),
  log_level: z.enum(LOG_TYPES).default('INFO'),
})

const Patch = z.object({
  name: z.string().max(400).nullable().optional(),
  enabled: z.boolean().optional(),
  order: z.number().int().min(0).optional(),
  config: Settings.optional(),
  log_level: z.enum(LOG_TYPES).optional(),
})

const ConfigParams = z.object({ plugin_config_id: z.string() })

const TypeFilter = z
  .union([z.string(), z.array(z.string())])
  .transform((v) => (Array.isArray(v) ? v : [v]).flatMap((s) => s.split(',')).filter(Boolean))
  .pipe(z.array(z.string().toUpperCase().pipe(z.enum(LOG_TYPES))))

// A date-time without an offset is UTC, as the stored timestamps are.
const instantMs = (s: string) => Date.parse(/(Z|[+-]\d\d:?\d\d)$/i.test(s) || !s.includes('T') ? s : `${s}Z`)
const Instant = z.string().refine((s) => !Number.isNaN(instantMs(s)), 'must be an ISO 8601 date-time')

const LogsQuery = PageQuery.extend({
  type_filter: TypeFilter.optional().describe('DEBUG, LOG, INFO, WARN or ERROR; repeated or comma-separated'),
  search: z.string().optional().describe('case-insensitive substring of the message'),
  after: Instant.optional().describe('only entries strictly after this ISO 8601 instant (UTC if no offset)'),
  before: Instant.optional().describe(
    'only entries strictly before this ISO 8601 instant (UTC if no offset)',
  ),
})

const PluginConfigBody = z.object({
  id: z.number().int(),
  plugin: z.number().int(),
  plugin_info: z.object({ id: z.number().int(), name: z.string(), description: z.string() }),
  name: z.string().nullable(),
  enabled: z.boolean(),
  order: z.number().int(),
  config: Settings,
  log_level: z.enum(LOG_TYPES),
  team_id: z.number().int(),
  deleted: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
})

const LogEntryBody = z.object({
  id: z.string(),
  team_id: z.number().int(),
  plugin_id: z.number().int(),
  plugin_config_id: z.number().int(),
  timestamp: z.string(),
  source: z.enum(LOG_SOURCES),
  type: z.enum(LOG_TYPES),
  message: z.string(),
  instance_id: z.string(),
})

const Envelope = <T extends z.ZodTypeAny>(item: T) =>
  z.object({
    count: z.number().int(),
    next: z.string().nullable(),
    previous: z.string().nullable(),
    results: z.array(item),
  })

function body(c: PluginConfig) {
  const p = pluginById(c.plugin)
  return {
    id: c.id,
    plugin: c.plugin,
    plugin_info: { id: c.plugin, name: p?.name ?? 'unknown', description: p?.description ?? '' },
    name: c.name,
    enabled: c.enabled,
    order: c.order,
    config: c.config,
    log_level: c.log_level,
    team_id: c.team_id,
    deleted: c.deleted,
    created_at: c.created_at,
    updated_at: c.updated_at,
  }
}

/** The plugin's own schema decides what a config may hold; its defaults are stored filled in. */
function validSettings(pluginId: number, settings: Record<string, unknown>): Record<string, unknown> {
  const plugin = pluginById(pluginId)
  if (!plugin) throw new ValidationError(`Unknown plugin ${pluginId}.`, 'plugin')
  const r = plugin.config.safeParse(settings)
  if (!r.success) {
    const issue = r.error.issues[0]
    const attr = ['config', ...(issue?.path ?? []).map(String)].join('.')
    throw new ValidationError(`${attr}: ${issue?.message ?? 'invalid'}`, attr)
  }
  return r.data as Record<string, unknown>
}

const configId = (raw: string) => (/^\d{1,15}$/.test(raw) ? Number(raw) : undefined)

export async function registerPluginConfigRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const store = await PluginConfigStore.open(ctx.rt.nc)
  const logs = new PluginLogWriter(ctx.rt.ch, { log: ctx.rt.log })
  app.addHook('onClose', async () => logs.close())

  /** SYSTEM lines are few: written through at once so the log shows them right after the change. */
  async function system(c: PluginConfig, type: LogType, message: string) {
    logs.write({
      team_id: c.team_id,
      plugin_id: c.plugin,
      plugin_config_id: c.id,
      source: 'SYSTEM',
      type,
      message,
    })
    await logs.flush().catch((err) => ctx.rt.log.warn({ err }, 'plugin config log line not written yet'))
  }

  async function existing(team: number, raw: string, includeDeleted = false): Promise<PluginConfig> {
    const id = configId(raw)
    const c = id === undefined ? undefined : await store.get(team, id)
    if (!c || (c.deleted && !includeDeleted)) throw new NotFound('Plugin config not found.')
    return c
  }

  projectRoute(app, ctx, {
    method: 'GET',
    path: '/plugin_configs/',
    scope: READ,
    tags: TAGS,
    summary: "The project's plugin configs in pipeline order",
    query: PageQuery,
    response: { 200: Envelope(PluginConfigBody) },
    handler: async (req, _reply, { project }) => {
      const page = paginate(req, req.query, await store.list(project.id))
      return { ...page, results: page.results.map(body) }
    },
  })

  projectRoute(app, ctx, {
    method: 'POST',
    path: '/plugin_configs/',
    scope: WRITE,
    tags: TAGS,
    summary: 'Add a plugin to the project pipeline',
    body: Create,
    response: { 201: PluginConfigBody },
    handler: async (req, reply, { principal, project }) => {
      const input = req.body
      const plugin = typeof input.plugin === 'number' ? pluginById(input.plugin) : pluginByName(input.plugin)
      if (!plugin) throw new ValidationError(`Unknown plugin ${JSON.stringify(input.plugin)}.`, 'plugin')
      const c = await store.create(project.id, principal.user.id, {
        plugin: plugin.id,
        name: input.name ?? null,
        enabled: input.enabled,
        order: input.order,
        config: validSettings(plugin.id, input.config),
        log_level: input.log_level,
      })
      await system(c, 'INFO', `Plugin config created (${plugin.name}, ${c.enabled ? 'enabled' : 'disabled'})`)
      return reply.code(201).send(body(c))
    },
  })

  projectRoute(app, ctx, {
    method: 'GET',
    path: '/plugin_configs/:plugin_config_id/',
    scope: READ,
    tags: TAGS,
    summary: 'Retrieve a plugin config',
    params: ConfigParams,
    response: { 200: PluginConfigBody },
    handler: async (req, _reply, { project }) => {
      return body(await existing(project.id, req.params.plugin_config_id))
    },
  })

  projectRoute(app, ctx, {
    method: 'PATCH',
    path: '/plugin_configs/:plugin_config_id/',
    scope: WRITE,
    tags: TAGS,
    summary: 'Change a plugin config; `config` is replaced as a whole',
    params: ConfigParams,
    body: Patch,
    response: { 200: PluginConfigBody },
    handler: async (req, _reply, { project }) => {
      const before = await existing(project.id, req.params.plugin_config_id)
      const changes = { ...req.body }
      if (changes.config) changes.config = validSettings(before.plugin, changes.config)
      const c = await store.update(project.id, before.id, changes)
      if (!c || c.deleted) throw new NotFound('Plugin config not found.')
      const what = Object.keys(changes).filter((k) => changes[k as keyof typeof changes] !== undefined)
      if (what.length) await system(c, 'INFO', `Plugin config updated: ${what.join(', ')}`)
      if (changes.enabled !== undefined && changes.enabled !== before.enabled) {
        await system(c, 'INFO', `Plugin config ${c.enabled ? 'enabled' : 'disabled'}`)
      }
      return body(c)
    },
  })

  projectRoute(app, ctx, {
    method: 'DELETE',
    path: '/plugin_configs/:plugin_config_id/',
    scope: WRITE,
    tags: TAGS,
    summary: 'Remove a plugin config from the pipeline (204); its log stays readable',
    params: ConfigParams,
    handler: async (req, reply, { project }) => {
      const c = await existing(project.id, req.params.plugin_config_id)
      const gone = await store.update(project.id, c.id, { deleted: true, enabled: false })
      if (gone) await system(gone, 'INFO', 'Plugin config deleted')
      return reply.code(204).send()
    },
  })

  projectRoute(app, ctx, {
    method: 'GET',
    path: '/plugin_configs/:plugin_config_id/logs/',
    scope: READ,
    tags: TAGS,
    summary: 'Log entries of a plugin config, newest first',
    params: ConfigParams,
    query: LogsQuery,
    response: { 200: Envelope(LogEntryBody) },
    handler: async (req, _reply, { project }) => {
      const c = await existing(project.id, req.params.plugin_config_id, true)
      const q = req.query
      const { count, results } = await fetchPluginLogs(
        ctx.rt.ch,
        {
          teamId: project.id,
          pluginConfigId: c.id,
          types: q.type_filter,
          search: q.search,
          after: q.after === undefined ? undefined : instantMs(q.after),
          before: q.before === undefined ? undefined : instantMs(q.before),
        },
        q,
      )
      return envelope(req, q, count, results)
    },
  })
}

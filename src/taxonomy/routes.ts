import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { AppError, NotFound, ValidationError } from '../http/errors.ts'
import { envelope, PageQuery } from '../http/paging.ts'
import { type ApiContext, projectRoute } from '../http/routes.ts'
import { CAMPAIGN } from '../projectors/identity/initial-props.ts'
import { PROPERTY_KIND } from './collect.ts'
import { eventDefinitionId, type EventDefinition, TaxonomyStore } from './store.ts'
import { EventVolumes } from './volume.ts'

// PostHog's event and property definitions (posthog/api/event_definition.py,
// posthog/taxonomy/property_definition_api.py), read from what the projectors recorded
// (docs/taxonomy.md). Read-only but for a property's type, which PostHog lets every plan set.

const TAGS = ['taxonomy']

/** A query parameter given once, repeated or comma-separated: the non-empty values. */
const ListParam = z
  .union([z.string(), z.array(z.string())])
  .optional()
  .transform((v) =>
    (v === undefined ? [] : Array.isArray(v) ? v : [v]).flatMap((s) => s.split(',')).filter(Boolean),
  )

/** A JSON-encoded list of names, as PostHog's `event_names` and `excluded_properties`. */
const jsonList = (field: string) =>
  z
    .string()
    .optional()
    .transform((raw, ctx): string[] | undefined => {
      if (raw === undefined || raw === '') return undefined
      try {
        const v: unknown = JSON.parse(raw)
        if (Array.isArray(v)) return v.map(String)
      } catch {
        // refused below
      }
      ctx.addIssue({ code: 'custom', message: `${field} must be a JSON list of names` })
      return z.NEVER
    })

const Bool = z
  .enum(['true', 'false', '1', '0', 'True', 'False'])
  .optional()
  .transform((v) => (v === undefined ? undefined : v === 'true' || v === '1' || v === 'True'))

const EVENT_ORDERING = ['name', 'last_seen_at', 'last_seen_at::date', 'created_at', 'created_at::date']

const EventDefinitionsQuery = PageQuery.extend({
  search: z.string().optional().describe('every whitespace-separated term must occur in the name'),
  event_type: z
    .enum(['event', 'event_custom', 'event_posthog', 'all', 'action_event'])
    .optional()
    .describe('event_custom: names without a `$` prefix; event_posthog: only names with one'),
  ordering: ListParam.describe(`sort keys (${EVENT_ORDERING.join(', ')}), '-' for descending`),
  names: ListParam.describe('exact names, repeated or comma-separated'),
  excluded_properties: jsonList('excluded_properties'),
  exclude_hidden: z.string().optional(),
})

const PROPERTY_TYPES = ['DateTime', 'String', 'Numeric', 'Boolean'] as const

const PropertyDefinitionsQuery = PageQuery.extend({
  search: z.string().optional(),
  type: z.enum(['event', 'person', 'group', 'session']).default('event'),
  group_type_index: z.coerce.number().int().optional(),
  properties: z.string().optional().describe('comma-separated names'),
  is_numerical: Bool,
  is_feature_flag: Bool,
  event_names: jsonList('event_names').describe(
    'JSON list: sets is_seen_on_filtered_events and sorts those seen first',
  ),
  filter_by_event_names: Bool,
  excluded_properties: jsonList('excluded_properties'),
  exclude_core_properties: Bool,
  exclude_hidden: z.string().optional(),
})

// ingestion's own keys and ones posthog-js once sent by mistake: never offered as event properties
// (PostHog's ALWAYS_EXCLUDED_EVENT_PROPERTIES)
const ALWAYS_EXCLUDED = [
  'distinct_id',
  '$set',
  '$set_once',
  '$initial_referrer',
  '$initial_referring_domain',
  '$groups',
  '$group_type',
  '$group_key',
  '$group_set',
  ...[0, 1, 2, 3, 4].map((i) => `$group_${i}`),
]
// the taxonomy's event properties without a `$` (exclude_core_properties also drops every `$` name)
const CORE_UNPREFIXED = ['distinct_id', ...CAMPAIGN]

const EventDefinitionBody = z.object({
  id: z.string(),
  name: z.string(),
  created_at: z.string().nullable(),
  last_seen_at: z.string().nullable(),
  last_updated_at: z.string().nullable(),
  tags: z.array(z.string()),
  volume_30_day: z.number().int().nullable(),
  query_usage_30_day: z.number().int().nullable(),
  is_action: z.boolean(),
  action_id: z.number().int().nullable(),
  is_calculating: z.boolean(),
  last_calculated_at: z.string().nullable(),
  created_by: z.null(),
  post_to_slack: z.boolean(),
})

const PropertyDefinitionBody = z.object({
  id: z.string(),
  name: z.string(),
  is_numerical: z.boolean(),
  property_type: z.enum(PROPERTY_TYPES).nullable(),
  tags: z.array(z.string()),
  is_seen_on_filtered_events: z.boolean().nullable(),
})

const page = <T extends z.ZodTypeAny>(item: T) =>
  z.object({
    count: z.number().int(),
    next: z.string().nullable(),
    previous: z.string().nullable(),
    results: z.array(item),
  })

const IdParams = z.object({ id: z.string() })

/** PostHog's answer to a change only its paid taxonomy allows. */
class EnterpriseOnly extends AppError {
  constructor() {
    super(402, 'invalid_request', 'payment_required', 'This feature is part of the premium PostHog offering.')
  }
}

const iso = (ms: number) => new Date(ms).toISOString()
/** PostHog's URLs answer with and without the trailing slash. */
const both = (path: string) => [`${path}/`, path] as const

export function registerTaxonomyRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const store = new TaxonomyStore(ctx.rt.queryCh)
  const volumes = new EventVolumes(ctx.rt.queryCh)

  const eventBody = (team: number, d: EventDefinition, volume: Map<string, number> | undefined) => ({
    id: eventDefinitionId(team, d.name),
    name: d.name,
    created_at: iso(d.created_at),
    last_seen_at: iso(d.last_seen_at),
    last_updated_at: null,
    tags: [],
    volume_30_day: volume ? (volume.get(d.name) ?? 0) : null,
    query_usage_30_day: null,
    is_action: false,
    action_id: null,
    is_calculating: false,
    last_calculated_at: null,
    created_by: null,
    post_to_slack: false,
  })

  // the volume is a nice-to-have: a failed count leaves it null rather than failing the list
  const volumeOf = (team: number, names: string[]) => volumes.of(team, names).catch(() => undefined)

  projectRoute(app, ctx, {
    method: 'GET',
    path: both('/event_definitions'),
    scope: 'event_definition:read',
    tags: TAGS,
    summary: 'List the event names the project has (newest seen first), with last seen and 30-day volume',
    query: EventDefinitionsQuery,
    response: { 200: page(EventDefinitionBody) },
    handler: async (req, _reply, { project }) => {
      const q = req.query
      const requested = q.ordering
        .filter((o) => EVENT_ORDERING.includes(o.replace(/^-/, '')))
        .map((o): [string, 'ASC' | 'DESC'] => [o.replace(/^-/, ''), o.startsWith('-') ? 'DESC' : 'ASC'])
      let order = requested.length
        ? requested
        : ([['last_seen_at::date', 'DESC']] as [string, 'ASC' | 'DESC'][])
      if (!order.some(([e]) => e === 'name')) order = [...order, ['name', 'ASC']]
      // a search shows the shortest matches first, as PostHog's does
      if (q.search?.trim() && !requested.length) order = [['length(name)', 'ASC'], ...order]
      const found = await store.eventDefinitions(project.id, {
        search: q.search,
        posthog:
          q.event_type === 'event_posthog' ? true : q.event_type === 'event_custom' ? false : undefined,
        names: q.names,
        excluded: q.excluded_properties,
        order,
        limit: q.limit,
        offset: q.offset,
      })
      const volume = await volumeOf(
        project.id,
        found.results.map((d) => d.name),
      )
      return envelope(
        req,
        q,
        found.count,
        found.results.map((d) => eventBody(project.id, d, volume)),
      )
    },
  })

  projectRoute(app, ctx, {
    method: 'GET',
    path: both('/event_definitions/:id'),
    scope: 'event_definition:read',
    tags: TAGS,
    summary: 'Retrieve an event definition by id',
    params: IdParams,
    response: { 200: EventDefinitionBody },
    handler: async (req, _reply, { project }) => {
      const d = await store.eventDefinition(project.id, req.params.id)
      if (!d) throw new NotFound()
      return eventBody(project.id, d, await volumeOf(project.id, [d.name]))
    },
  })

  const propertyBody = (p: {
    id: string
    name: string
    property_type: (typeof PROPERTY_TYPES)[number] | null
    is_seen_on_filtered_events: boolean | null
  }) => ({
    id: p.id,
    name: p.name,
    is_numerical: p.property_type === 'Numeric',
    property_type: p.property_type,
    tags: [],
    is_seen_on_filtered_events: p.is_seen_on_filtered_events,
  })

  projectRoute(app, ctx, {
    method: 'GET',
    path: both('/property_definitions'),
    scope: 'property_definition:read',
    tags: TAGS,
    summary: 'List the property names of events, persons or a group type, with their inferred types',
    query: PropertyDefinitionsQuery,
    response: { 200: page(PropertyDefinitionBody) },
    handler: async (req, _reply, { project }) => {
      const q = req.query
      if (q.type === 'group' && q.group_type_index === undefined) {
        throw new ValidationError('`group_type_index` must be set for `group` type', 'group_type_index')
      }
      if (q.type !== 'group' && q.group_type_index !== undefined) {
        throw new ValidationError('`group_type_index` can only set for `group` type', 'group_type_index')
      }
      if (q.group_type_index !== undefined && (q.group_type_index < 0 || q.group_type_index > 4)) {
        throw new ValidationError('Invalid value for `group_type_index`', 'group_type_index')
      }
      if (q.type !== 'event' && q.event_names?.length) {
        throw new ValidationError('`event_names` can only be set for `event` type', 'event_names')
      }
      // Burrow records no session properties
      if (q.type === 'session') return envelope(req, q, 0, [])
      const event = q.type === 'event'
      const excluded = [...(q.excluded_properties ?? [])]
      const excludedPrefixes: string[] = []
      if (event) {
        excluded.push(...ALWAYS_EXCLUDED)
        excludedPrefixes.push('$session_entry_')
        if (q.exclude_core_properties) {
          excluded.push(...CORE_UNPREFIXED)
          excludedPrefixes.push('$')
        }
      }
      const found = await store.propertyDefinitions(project.id, {
        type: PROPERTY_KIND[q.type],
        groupTypeIndex: q.type === 'group' ? q.group_type_index! : -1,
        search: q.search,
        names: q.properties?.split(',').filter(Boolean),
        excluded,
        excludedPrefixes,
        numerical: q.is_numerical === true,
        featureFlag: q.is_feature_flag,
        eventNames: q.event_names,
        onlySeen: q.filter_by_event_names === true,
        limit: q.limit,
        offset: q.offset,
      })
      return envelope(req, q, found.count, found.results.map(propertyBody))
    },
  })

  projectRoute(app, ctx, {
    method: 'GET',
    path: both('/property_definitions/seen_together'),
    scope: 'property_definition:read',
    tags: TAGS,
    summary: 'Whether each event was seen with the property',
    query: z.object({ event_names: ListParam, property_name: z.string().min(1) }),
    response: { 200: z.record(z.string(), z.boolean()) },
    handler: async (req, _reply, { project }) =>
      store.seenTogether(project.id, req.query.event_names, req.query.property_name),
  })

  const stored = async (team: number, id: string) => {
    const d = await store.propertyDefinition(team, id)
    if (!d) throw new NotFound()
    return d
  }

  projectRoute(app, ctx, {
    method: 'GET',
    path: both('/property_definitions/:id'),
    scope: 'property_definition:read',
    tags: TAGS,
    summary: 'Retrieve a property definition by id',
    params: IdParams,
    response: { 200: PropertyDefinitionBody },
    handler: async (req, _reply, { project }) => propertyBody(await stored(project.id, req.params.id)),
  })

  projectRoute(app, ctx, {
    method: 'PATCH',
    path: both('/property_definitions/:id'),
    scope: 'property_definition:write',
    tags: TAGS,
    summary: 'Set the type of a property definition (the only change PostHog allows on every plan)',
    params: IdParams,
    body: z.object({ property_type: z.enum(PROPERTY_TYPES).optional() }).passthrough(),
    response: { 200: PropertyDefinitionBody },
    handler: async (req, _reply, { project }) => {
      const d = await stored(project.id, req.params.id)
      const { property_type, ...rest } = req.body
      if (Object.keys(rest).length) throw new EnterpriseOnly()
      if (property_type === undefined || property_type === d.property_type) return propertyBody(d)
      await store.setPropertyType(project.id, d, property_type)
      return propertyBody({ ...d, property_type })
    },
  })
}

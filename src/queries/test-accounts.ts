// The project's test-account filters (PostHog's team.test_account_filters) and what
// `filterTestAccounts` does with them, for every query that takes it (insights, their actors,
// paths, HogQL filters, web analytics, experiments, the legacy person lists): each stored filter
// is AND'ed to the events the query reads, beside the query's own `properties`, exactly as those
// are (event, person, cohort, element, group, hogql filters alike). An empty setting adds nothing.
import { z } from 'zod'
import type { ProjectSettings } from '../accounts/documents.ts'
import { ValidationError } from '../http/errors.ts'
import {
  type PropertyFilter,
  PropertyFilterSchema,
  type PropertyGroup,
  PropertyGroupSchema,
  propertiesCondition,
} from './insights/common/index.ts'

/** What these helpers read of a project: its settings (tests pass bare settings). */
export interface WithSettings {
  settings?: Pick<ProjectSettings, 'test_account_filters'> | null
}

const StoredFilters = z.array(z.union([PropertyGroupSchema, PropertyFilterSchema]))

/**
 * The project's test-account filters, each one a condition of its own (a stored AND/OR group is
 * kept as one). A stored entry that is not a property filter is a 400 naming the field.
 */
export function projectTestAccountFilters(project: WithSettings): (PropertyFilter | PropertyGroup)[] {
  const stored = project.settings?.test_account_filters ?? []
  if (!stored.length) return []
  const parsed = StoredFilters.safeParse(stored)
  if (!parsed.success) {
    throw new ValidationError(
      "The project's test_account_filters are not valid property filters",
      'filterTestAccounts',
    )
  }
  return parsed.data
}

/** The test-account filters a query applies: the project's when `on`, none otherwise. */
export function testAccountFilters(on: boolean | null | undefined, project: WithSettings) {
  return on ? projectTestAccountFilters(project) : []
}

/** The HogQL condition of the test-account filters a query applies; undefined when none. */
export function testAccountsCondition(
  on: boolean | null | undefined,
  project: WithSettings,
): string | undefined {
  const filters = testAccountFilters(on, project)
  return filters.length ? propertiesCondition({ type: 'AND', values: filters }) : undefined
}

/** `own` AND `extra`: a list stays a list, a group becomes the group AND the extra filters. */
export function andProperties(own: unknown, extra: (PropertyFilter | PropertyGroup)[]): unknown {
  if (!extra.length) return own
  if (own === null || own === undefined) return extra
  if (Array.isArray(own)) return [...(own as unknown[]), ...extra]
  // a group (or something the kind's schema refuses as it would have anyway)
  return { type: 'AND', values: [own, { type: 'AND', values: extra }] }
}

/**
 * The query node with the project's test-account filters folded into its `properties` when it
 * sets filterTestAccounts; filterTestAccounts is then false, so a node folded twice (a kind and
 * its actors both fold) gets the filters once. The node itself when nothing changes.
 */
export function withTestAccounts<T extends object>(node: T, project: WithSettings): T {
  const n = node as { filterTestAccounts?: unknown; properties?: unknown }
  if (n.filterTestAccounts !== true) return node
  const extra = projectTestAccountFilters(project)
  if (!extra.length) return node
  return { ...node, properties: andProperties(n.properties, extra), filterTestAccounts: false }
}

/**
 * Whether a query asks for test-account filters anywhere in it (a kind's own field, a HogQL
 * query's filters, an actors query's source, an experiment's exposure criteria): the results
 * cache keys such queries on the project's filters.
 */
export function asksForTestAccounts(query: unknown, depth = 0): boolean {
  if (depth > 8 || query === null || typeof query !== 'object') return false
  if (Array.isArray(query)) return false
  for (const [k, v] of Object.entries(query)) {
    if (k === 'filterTestAccounts' && v === true) return true
    if (v !== null && typeof v === 'object' && !Array.isArray(v) && asksForTestAccounts(v, depth + 1))
      return true
  }
  return false
}

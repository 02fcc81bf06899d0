// PostHog's HogQLFilters (the `filters` of a HogQLQuery) as the HogQL condition that replaces the
// query's `{filters}` placeholder, as posthog/hogql/filters.py builds it: the property filters
// (event scope), `timestamp < date_to`, `timestamp >= date_from` (dates in the project's zone,
// absolute or relative like '-7d', never truncated; 'all' is no lower bound) and the project's
// test-account filters when filterTestAccounts is set (test-accounts.ts), each AND'ed as PostHog's
// ReplaceFilters appends them.
import { z } from 'zod'
import { ValidationError } from '../http/errors.ts'
import {
  and,
  bound,
  DateRangeSchema,
  parseDate,
  PropertiesSchema,
  propertiesCondition,
  str,
  wallOf,
} from './insights/common/index.ts'
import { testAccountsCondition, type WithSettings } from './test-accounts.ts'

/** PostHog's HogQLFilters; other fields are accepted and ignored. */
export const HogQLFiltersSchema = z
  .object({
    properties: PropertiesSchema.nullable().optional(),
    dateRange: DateRangeSchema.nullable().optional(),
    filterTestAccounts: z.boolean().nullable().optional(),
  })
  .passthrough()

/**
 * The HogQL condition `{filters}` stands for, or undefined when no filters are given (then the
 * compiler reads `{filters}` as true). `now` is the instant relative dates count back from.
 */
export function filtersCondition(
  raw: unknown,
  project: WithSettings & { timezone: string },
  now = Date.now(),
): string | undefined {
  const tz = project.timezone
  if (raw === null || raw === undefined) return undefined
  const parsed = HogQLFiltersSchema.safeParse(raw)
  if (!parsed.success) {
    throw new ValidationError(`Invalid filters: ${parsed.error.issues[0]?.message ?? 'bad shape'}`, 'filters')
  }
  const f = parsed.data
  if (!Object.keys(f).length) return undefined
  const wallNow = wallOf(now, tz)
  const at = (text: string, field: string) => str(bound(parseDate(text, tz, wallNow, false, field).wall))
  const dateTo = f.dateRange?.date_to
  const dateFrom = f.dateRange?.date_from
  return and([
    f.properties ? propertiesCondition(f.properties) : undefined,
    dateTo ? `timestamp < ${at(dateTo, 'filters.dateRange.date_to')}` : undefined,
    dateFrom && dateFrom !== 'all'
      ? `timestamp >= ${at(dateFrom, 'filters.dateRange.date_from')}`
      : undefined,
    testAccountsCondition(f.filterTestAccounts, project),
  ])
}

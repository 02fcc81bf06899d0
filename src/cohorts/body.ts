import { z } from 'zod'
import type { UserBasic } from '../accounts/user-body.ts'
import { ValidationError } from '../http/errors.ts'
import type { Cohort } from './document.ts'

// The cohort as PostHog's CohortSerializer shows it, and what a client may send (JSON, or a
// multipart form whose fields are text: booleans and JSON arrive as strings).

const bool = z.union([
  z.boolean(),
  z
    .enum(['true', 'false', 'True', 'False', '1', '0'])
    .transform((v) => v === 'true' || v === 'True' || v === '1'),
])

/** JSON text (from a form field) parsed, anything else as it is. */
const jsonOrText = (attr: string, message: string) =>
  z
    .unknown()
    .transform((v, ctx) => {
      if (typeof v !== 'string') return v
      try {
        return JSON.parse(v) as unknown
      } catch {
        ctx.addIssue({ code: 'custom', message, path: [] })
        return z.NEVER
      }
    })
    .describe(attr)

export const CohortWrite = z
  .object({
    name: z.string().max(400).nullable().optional(),
    description: z.string().max(1000).optional(),
    groups: jsonOrText('groups', 'groups must be a list').pipe(z.array(z.unknown())).optional(),
    filters: jsonOrText('filters', "Filters must be a dictionary with a 'properties' key.").optional(),
    query: z.unknown().optional(),
    is_static: bool.optional(),
    cohort_type: z.string().nullable().optional(),
    deleted: bool.optional(),
    /** a static cohort's members, as an uploaded CSV file (multipart field `csv`) */
    csv: z
      .string()
      .max(50 * 1024 * 1024)
      .optional(),
    _create_static_person_ids: z.array(z.string()).max(100_000).optional(),
    _create_in_folder: z.string().optional(),
  })
  .passthrough()
export type CohortWrite = z.infer<typeof CohortWrite>

/** The cohort body of every response. */
export function cohortBody(c: Cohort, createdBy: UserBasic | null) {
  return {
    id: c.id,
    name: c.name,
    description: c.description,
    groups: c.groups,
    deleted: c.deleted,
    filters: c.filters ?? { properties: { type: 'AND', values: [] } },
    query: null,
    is_calculating: c.is_calculating,
    created_by: createdBy,
    created_at: c.created_at,
    last_calculation: c.last_calculation,
    errors_calculating: c.errors_calculating,
    last_error_at: c.last_error_at,
    count: c.count,
    is_static: c.is_static,
    cohort_type: c.cohort_type,
    experiment_set: [] as number[],
    // Burrow's: the calculation running now, a query like any other (DELETE /query/:query_id cancels it)
    calculation: c.calculation
      ? { query_id: c.calculation.query_id, started_at: c.calculation.started_at }
      : null,
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Person uuids as given, refusing anything else (attr `attr`). */
export function personIds(ids: unknown[], attr: string): string[] {
  return ids.map((id) => {
    if (typeof id !== 'string' || !UUID.test(id))
      throw new ValidationError(`${String(id)} is not a valid person UUID`, attr)
    return id.toLowerCase()
  })
}

import { z } from 'zod'
import { AuthenticationError, ValidationError } from '../http/errors.ts'

// The body of POST /decide and POST /flags, after decodeBody. Lenient where SDKs differ: ids may
// be numbers, groups may map to numbers, and anything unknown is ignored.

const id = z.union([z.string(), z.number(), z.boolean()]).transform(String)
const propertyBag = z.record(z.string(), z.unknown())
const truthy = z
  .union([z.boolean(), z.string(), z.number()])
  .transform((v) => v === true || v === 'true' || v === 1)

const FlagRequestSchema = z.object({
  api_key: z.string().optional(),
  token: z.string().optional(),
  $token: z.string().optional(),
  distinct_id: id.optional(),
  groups: z.record(z.string(), id).nullish().catch(undefined),
  person_properties: propertyBag.nullish().catch(undefined),
  group_properties: z.record(z.string(), propertyBag).nullish().catch(undefined),
  flag_keys_to_evaluate: z.array(z.string()).nullish().catch(undefined),
  geoip_disable: truthy.nullish().catch(undefined),
})

export interface FlagRequest {
  token: string
  distinctId: string
  groups: Record<string, string>
  personProperties: Record<string, unknown>
  groupProperties: Record<string, Record<string, unknown>>
  /** Only these flags are evaluated when given (posthog-node asks for one flag this way). */
  flagKeys: string[] | null
  geoipDisable: boolean
}

export function parseFlagRequest(body: unknown, queryToken: string | undefined): FlagRequest {
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw new ValidationError('Request body must be a JSON object.', null, 'invalid_payload')
  }
  const parsed = FlagRequestSchema.safeParse(body)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    const attr = issue?.path.map(String).join('.') || null
    throw new ValidationError(`${attr ?? 'body'}: ${issue?.message ?? 'invalid'}`, attr)
  }
  const b = parsed.data
  const token = b.api_key ?? b.token ?? b.$token ?? queryToken
  if (!token) throw new AuthenticationError('No project API key was provided.', 'missing_api_key')
  const distinctId = b.distinct_id?.trim() ? b.distinct_id : undefined
  if (distinctId === undefined)
    throw new ValidationError('distinct_id is required.', 'distinct_id', 'required')
  return {
    token,
    distinctId,
    groups: b.groups ?? {},
    personProperties: b.person_properties ?? {},
    groupProperties: b.group_properties ?? {},
    flagKeys: b.flag_keys_to_evaluate ?? null,
    geoipDisable: b.geoip_disable ?? false,
  }
}

import type { FlagDefinition } from './definition.ts'
import { type FlagEvaluation, type FlagReason, type FlagResult, payloadText } from './evaluate.ts'

// Response bodies of PostHog's flag endpoints, built from an evaluation. Shapes follow the
// flags service (rust/feature-flags/src/api/types.rs) and what @posthog/core parses
// (normalizeFlagsResponse in featureFlagUtils.ts).

export const QUOTA_LIMITED_RESOURCE = 'feature_flags'

export type FlagValue = boolean | string

export interface RemoteConfigFields {
  config: { enable_collect_everything: boolean }
  toolbarParams: Record<string, unknown>
  isAuthenticated: boolean
  supportedCompression: string[]
}

export interface DecideV3Body extends RemoteConfigFields {
  errorsWhileComputingFlags: boolean
  featureFlags: Record<string, FlagValue>
  featureFlagPayloads: Record<string, string>
  quotaLimited?: string[]
}

export interface FlagDetails {
  key: string
  enabled: boolean
  variant: string | null
  reason: FlagReason
  metadata: { id: number; version: number; description: string | null; payload: string | null }
}

export interface FlagsV2Body {
  flags: Record<string, FlagDetails>
  errorsWhileComputingFlags: boolean
  requestId: string
  evaluatedAt: number
  quotaLimited?: string[]
}

export type DecideV4Body = FlagsV2Body & RemoteConfigFields

export interface ResponseContext {
  quotaLimited?: boolean
  requestId: string
  // Milliseconds since the epoch.
  evaluatedAt: number
}

export function remoteConfigFields(): RemoteConfigFields {
  return {
    config: { enable_collect_everything: true },
    toolbarParams: {},
    isAuthenticated: false,
    supportedCompression: ['gzip', 'lz64'],
  }
}

// A multivariate match is its variant key, anything else its enabled state.
export function flagValue(result: FlagResult): FlagValue {
  return result.variant ?? result.enabled
}

export function decideV3Body(evaluation: FlagEvaluation, quotaLimited = false): DecideV3Body {
  if (quotaLimited) {
    return {
      ...remoteConfigFields(),
      errorsWhileComputingFlags: false,
      featureFlags: {},
      featureFlagPayloads: {},
      quotaLimited: [QUOTA_LIMITED_RESOURCE],
    }
  }
  const featureFlags: Record<string, FlagValue> = {}
  const featureFlagPayloads: Record<string, string> = {}
  for (const result of Object.values(evaluation.results)) {
    featureFlags[result.key] = flagValue(result)
    if (result.enabled && result.payload !== null) featureFlagPayloads[result.key] = result.payload
  }
  return {
    ...remoteConfigFields(),
    errorsWhileComputingFlags: evaluation.errorsWhileComputingFlags,
    featureFlags,
    featureFlagPayloads,
  }
}

function flagDetails(result: FlagResult, definition: FlagDefinition | undefined): FlagDetails {
  return {
    key: result.key,
    enabled: result.enabled,
    variant: result.variant,
    reason: result.reason,
    // The Rust service always sends a null description and version 0 for unversioned flags.
    metadata: {
      id: definition?.id ?? 0,
      version: definition?.version ?? 0,
      description: null,
      payload: result.payload,
    },
  }
}

export function flagsV2Body(
  evaluation: FlagEvaluation,
  definitions: readonly FlagDefinition[],
  context: ResponseContext,
): FlagsV2Body {
  const base = { requestId: context.requestId, evaluatedAt: context.evaluatedAt }
  if (context.quotaLimited) {
    return { flags: {}, errorsWhileComputingFlags: false, ...base, quotaLimited: [QUOTA_LIMITED_RESOURCE] }
  }
  const byKey = new Map(definitions.map((definition) => [definition.key, definition]))
  const flags: Record<string, FlagDetails> = {}
  for (const result of Object.values(evaluation.results)) {
    flags[result.key] = flagDetails(result, byKey.get(result.key))
  }
  return { flags, errorsWhileComputingFlags: evaluation.errorsWhileComputingFlags, ...base }
}

// The JSON text of flagsV2Body, written directly. /flags?v=2 is the hot path: building ~50 detail
// objects and stringifying them cost about as much as evaluating the flags. The parts of a flag's
// details that depend only on its definition are written once per definition object (the cache
// replaces the object on every change), a reason once per shared reason object.
interface DefinitionJson {
  key: string
  id: number
  version: number
  /** `"<key>":{"key":"<key>","enabled":` */
  head: string
  /** `,"metadata":{"id":<id>,"version":<version>,"description":null,"payload":` */
  metadata: string
}
const definitionJson = new WeakMap<FlagDefinition, DefinitionJson>()
const reasonJson = new WeakMap<FlagReason, string>()

function definitionParts(key: string, definition: FlagDefinition | undefined): DefinitionJson {
  const id = definition?.id ?? 0
  const version = definition?.version ?? 0
  if (definition) {
    const hit = definitionJson.get(definition)
    if (hit && hit.key === key && hit.id === id && hit.version === version) return hit
  }
  const quoted = JSON.stringify(key)
  const parts = {
    key,
    id,
    version,
    head: `${quoted}:{"key":${quoted},"enabled":`,
    metadata: `,"metadata":{"id":${JSON.stringify(id)},"version":${JSON.stringify(version)},"description":null,"payload":`,
  }
  if (definition) definitionJson.set(definition, parts)
  return parts
}

function reasonText(reason: FlagReason): string {
  let text = reasonJson.get(reason)
  if (text === undefined) {
    text = JSON.stringify(reason)
    // evaluate.ts shares frozen reasons; another object might change, so it is not remembered
    if (Object.isFrozen(reason)) reasonJson.set(reason, text)
  }
  return text
}

const nullable = (text: string | null) => (text === null ? 'null' : JSON.stringify(text))

/** Exactly `JSON.stringify(flagsV2Body(evaluation, definitions, context))`, made faster. */
export function flagsV2Json(
  evaluation: FlagEvaluation,
  definitions: readonly FlagDefinition[],
  context: ResponseContext,
): string {
  const tail = `"requestId":${JSON.stringify(context.requestId)},"evaluatedAt":${JSON.stringify(context.evaluatedAt)}`
  if (context.quotaLimited) {
    return `{"flags":{},"errorsWhileComputingFlags":false,${tail},"quotaLimited":["${QUOTA_LIMITED_RESOURCE}"]}`
  }
  const byKey = new Map<string, FlagDefinition>()
  for (const definition of definitions) byKey.set(definition.key, definition)
  const flags: string[] = []
  // The results' order is the key order of flagsV2Body's `flags` object (the same keys).
  for (const result of Object.values(evaluation.results)) {
    const parts = definitionParts(result.key, byKey.get(result.key))
    flags.push(
      `${parts.head}${result.enabled},"variant":${nullable(result.variant)},"reason":${reasonText(result.reason)}${parts.metadata}${nullable(result.payload)}}}`,
    )
  }
  return `{"flags":{${flags.join(',')}},"errorsWhileComputingFlags":${evaluation.errorsWhileComputingFlags},${tail}}`
}

// /decide?v=4 is the /flags?v=2 body with the remote config fields alongside.
export function decideV4Body(
  evaluation: FlagEvaluation,
  definitions: readonly FlagDefinition[],
  context: ResponseContext,
): DecideV4Body {
  return { ...remoteConfigFields(), ...flagsV2Body(evaluation, definitions, context) }
}

export interface LocalEvaluationFlag {
  id: number
  name: string
  key: string
  active: boolean
  deleted: boolean
  ensure_experience_continuity: boolean
  version: number
  filters: {
    groups: FlagDefinition['filters']['groups']
    multivariate: FlagDefinition['filters']['multivariate'] | null
    aggregation_group_type_index: number | null
    payloads: Record<string, string>
  }
}

export interface LocalEvaluationBody {
  flags: LocalEvaluationFlag[]
  group_type_mapping: Record<string, string>
  /** cohort definitions the SDK evaluates itself, by id (src/cohorts/flag-match.ts localCohorts) */
  cohorts: Record<string, unknown>
}

// Definitions for SDK local evaluation (GET /api/feature_flag/local_evaluation and
// /flags/definitions). Inactive flags stay in so SDKs answer false for them instead of
// asking the server; payloads travel as JSON text, which posthog-node parses.
export function localEvaluationBody(
  definitions: readonly FlagDefinition[],
  groupTypeIndexToName: Record<number, string>,
  cohorts: Record<string, unknown> = {},
): LocalEvaluationBody {
  const flags = definitions
    .filter((definition) => !definition.deleted)
    .map((definition): LocalEvaluationFlag => {
      const payloads: Record<string, string> = {}
      for (const [key, payload] of Object.entries(definition.filters.payloads)) {
        const text = payloadText(payload)
        if (text !== null) payloads[key] = text
      }
      return {
        id: definition.id,
        name: definition.name,
        key: definition.key,
        active: definition.active,
        deleted: definition.deleted,
        ensure_experience_continuity: definition.ensure_experience_continuity,
        version: definition.version ?? 0,
        filters: {
          groups: definition.filters.groups,
          multivariate: definition.filters.multivariate ?? null,
          aggregation_group_type_index: definition.filters.aggregation_group_type_index ?? null,
          payloads,
        },
      }
    })
  const group_type_mapping: Record<string, string> = {}
  for (const [index, name] of Object.entries(groupTypeIndexToName)) group_type_mapping[index] = name
  return { flags, group_type_mapping, cohorts }
}

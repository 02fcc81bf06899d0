import { LRUCache } from 'lru-cache'
import type { ClickHouseClient } from '@clickhouse/client'
import { FLAG_GEOIP_KEYS, lookupGeoip } from '../geoip/index.ts'
import type { Logger } from '../observability/logger.ts'
import { merged } from '../property-bags/copies.ts'
import type { FlagCache } from './cache.ts'
import { matchRegexes } from '../patterns/regex.ts'
import {
  enrollmentKey,
  type EvalInput,
  evaluateFlags,
  type FlagEvaluation,
  regexMatchesOf,
} from './evaluate.ts'
import { type GroupTypeCache, groupProperties, personProperties } from './properties.ts'
import type { FlagRequest } from './request.ts'
import type { StoredFlag } from './stored-definition.ts'
import type { CohortDocs } from '../cohorts/cache.ts'
import { byProperties, closure, flagCohortIds, inCohort } from '../cohorts/flag-match.ts'
import type { CohortMembership } from '../cohorts/members.ts'
import type { PropertyFilter } from './definition.ts'
import { matchProperty } from './match.ts'

// One evaluation request end to end: the project's live definitions from the watched cache,
// stored properties (person: from memory, src/flags/person-mirror.ts; groups: ClickHouse) only when
// a flag needs a property the request did not bring,
// GeoIP from the client address, and per-flag error isolation when a lookup fails.

export interface EvaluationDeps {
  cache: FlagCache
  ch: ClickHouseClient
  groupTypes: GroupTypeCache
  log: Logger
  /** stored person properties; default a ClickHouse query per request (the process uses PersonMirror) */
  persons?: { properties(teamId: number, distinctId: string): Promise<Properties> }
  /** cohort definitions and computed membership, for cohort conditions (absent: such flags fail) */
  cohorts?: { docs: CohortDocs; membership: CohortMembership }
}

export interface EvaluationOutcome {
  evaluation: FlagEvaluation
  /** The definitions that were considered, for the v2 metadata (id, version). */
  definitions: StoredFlag[]
}

type Properties = Record<string, unknown>

const filterKeys = new WeakMap<StoredFlag, string[]>()

// The property keys a flag's conditions read (cached per definition object, which the cache
// replaces on every change).
function keysOf(flag: StoredFlag): string[] {
  let keys = filterKeys.get(flag)
  if (!keys) {
    keys = [...new Set(flag.filters.groups.flatMap((c) => c.properties.map((p) => p.key)))]
    if (flag.filters.feature_enrollment === true) keys.push(enrollmentKey(flag.key))
    filterKeys.set(flag, keys)
  }
  return keys
}

const cohortIds = new WeakMap<StoredFlag, number[]>()

/** The cohorts a flag's conditions name (cached per definition object). */
function cohortsOf(flag: StoredFlag): number[] {
  let ids = cohortIds.get(flag)
  if (!ids) cohortIds.set(flag, (ids = flagCohortIds(flag.filters)))
  return ids
}

// A cohort's person filters read properties the flag's own conditions do not name: a flag with a
// cohort condition always reads the stored ones.
const needsStored = (flag: StoredFlag, known: Properties) =>
  cohortsOf(flag).length > 0 || keysOf(flag).some((k) => !Object.hasOwn(known, k))

// (a function of the module, not a closure per request: tsx names each closure with a defineProperty)
function fail(failed: Map<string, string>, flags: StoredFlag[], why: string): void {
  for (const f of flags) failed.set(f.key, why)
}

/** The `$geoip_*` properties PostHog's flags service derives from the client address. */
export function geoipPersonProperties(ip: string | null): Properties {
  const all = lookupGeoip(ip)
  const out: Properties = {}
  for (const key of FLAG_GEOIP_KEYS) if (all[key] !== undefined) out[key] = all[key]
  return out
}

// An SDK asks for flags again and again from the same address, and the database does not change
// while the process runs: answers are remembered per address (a few thousand µs of lookups a second
// otherwise). Callers copy what they get, never change it.
const geoipByAddress = new LRUCache<string, Properties>({ max: 10_000 })

function geoipFor(ip: string | null): Properties {
  if (ip === null) return geoipPersonProperties(ip)
  let props = geoipByAddress.get(ip)
  if (!props) {
    props = geoipPersonProperties(ip)
    geoipByAddress.set(ip, props)
  }
  return props
}

interface Split {
  /** the active, not deleted flags, in the cache's order */
  live: StoredFlag[]
  person: StoredFlag[]
  group: StoredFlag[]
}

// The cache hands out the same list until a flag of the project changes: its live flags and their
// split by aggregation are worked out once per list, not per request.
const splits = new WeakMap<readonly StoredFlag[], Split>()

function split(all: readonly StoredFlag[], keys: string[] | null): Split {
  if (keys === null) {
    const hit = splits.get(all)
    if (hit) return hit
  }
  const wanted = keys === null ? null : new Set(keys)
  const live = all.filter((f) => f.active && !f.deleted && (wanted === null || wanted.has(f.key)))
  const result = {
    live,
    person: live.filter((f) => f.filters.aggregation_group_type_index == null),
    group: live.filter((f) => f.filters.aggregation_group_type_index != null),
  }
  if (keys === null) splits.set(all, result)
  return result
}

export async function evaluateRequest(
  deps: EvaluationDeps,
  teamId: number,
  req: FlagRequest,
  clientIp: string | null,
): Promise<EvaluationOutcome> {
  const {
    live: definitions,
    person: personFlags,
    group: groupFlags,
  } = split(deps.cache.flags(teamId), req.flagKeys)
  // Stored < GeoIP < request: the request's person_properties always win.
  // (merged, not spread: keys added to a spread copy cost ~1 µs each on Node 20, and a located
  // request added the request's keys, then these, to copies: 14-38 µs a request)
  const personOverrides = merged(req.geoipDisable ? {} : geoipFor(clientIp), req.personProperties)
  const failed = new Map<string, string>()

  let mapping: Record<number, string> = {}
  if (groupFlags.length > 0) {
    try {
      mapping = await deps.groupTypes.get(teamId)
    } catch (err) {
      deps.log.warn({ err, team_id: teamId }, 'group type lookup failed; group flags left out')
      fail(failed, groupFlags, 'group types unavailable')
    }
  }

  const personFromStore = personFlags.filter((f) => needsStored(f, personOverrides))
  const groupFromStore = new Map<number, StoredFlag[]>()
  for (const f of groupFlags) {
    if (failed.has(f.key)) continue
    const index = f.filters.aggregation_group_type_index as number
    const name = mapping[index]
    if (name === undefined || req.groups[name] === undefined) continue
    if (!needsStored(f, req.groupProperties[name] ?? {})) continue
    groupFromStore.set(index, [...(groupFromStore.get(index) ?? []), f])
  }

  const wantedGroups = [...groupFromStore.keys()].map((index) => ({
    index,
    key: req.groups[mapping[index]!]!,
  }))
  // cohorts the person flags name: those decided by computed membership are looked up meanwhile
  const named = [...new Set(personFlags.flatMap(cohortsOf))]
  const cohortOf = (id: number) => deps.cohorts?.docs.get(teamId, id)
  const byMembers = named.length
    ? closure(named, cohortOf).filter((c) => !c.deleted && !byProperties(c.id, cohortOf))
    : []
  const membersLookup =
    byMembers.length && deps.cohorts
      ? deps.cohorts.membership.of(teamId, req.distinctId, byMembers)
      : undefined
  membersLookup?.catch(() => undefined)
  const [storedPerson, storedGroups] = await Promise.allSettled([
    personFromStore.length === 0
      ? Promise.resolve({})
      : deps.persons
        ? deps.persons.properties(teamId, req.distinctId)
        : personProperties(deps.ch, teamId, req.distinctId),
    groupProperties(deps.ch, teamId, wantedGroups),
  ])
  let person: Properties = {}
  if (storedPerson.status === 'fulfilled') person = storedPerson.value
  else {
    deps.log.warn({ err: storedPerson.reason, team_id: teamId }, 'person lookup failed')
    fail(failed, personFromStore, 'person properties unavailable')
  }
  const groupProps: Record<string, Properties> = { ...req.groupProperties }
  if (storedGroups.status === 'fulfilled') {
    for (const [index, stored] of Object.entries(storedGroups.value)) {
      const name = mapping[Number(index)]!
      groupProps[name] = merged(stored, req.groupProperties[name] ?? {})
    }
  } else {
    deps.log.warn({ err: storedGroups.reason, team_id: teamId }, 'group lookup failed')
    fail(failed, [...groupFromStore.values()].flat(), 'group properties unavailable')
  }

  let members: ReadonlySet<number> | undefined
  if (membersLookup) {
    try {
      members = await membersLookup
    } catch (err) {
      // the flags that need a membership fail (left out); the others are answered
      deps.log.warn({ err, team_id: teamId }, 'cohort membership lookup failed')
    }
  }
  const personProps = merged(person, personOverrides)
  const input: EvalInput = {
    distinctId: req.distinctId,
    personProperties: personProps,
    groups: req.groups,
    groupProperties: groupProps,
    groupTypeIndexToName: mapping,
  }
  if (named.length && deps.cohorts) {
    input.inCohort = (id) =>
      inCohort(id, {
        cohort: cohortOf,
        members,
        matchFilter: (f) => matchProperty({ ...f, type: 'person' } as PropertyFilter, personProps),
      })
  }
  const evaluable = failed.size ? definitions.filter((f) => !failed.has(f.key)) : definitions
  // regexes answered first, together: the costly ones in the regex workers, never on this thread
  const matches = regexMatchesOf(evaluable, input)
  const regex = matches.length > 0 ? await matchRegexes(teamId, matches) : undefined
  const evaluation = evaluateFlags(evaluable, input, { regex })
  for (const [key, why] of failed) evaluation.errors[key] = why
  if (failed.size) evaluation.errorsWhileComputingFlags = true
  if (Object.keys(evaluation.errors).length > 0) {
    deps.log.debug({ team_id: teamId, errors: evaluation.errors }, 'flags left out of the response')
  }
  return { evaluation, definitions }
}

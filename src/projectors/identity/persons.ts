import { isDistinctIdIllegal } from './illegal-ids.ts'
import { uuidFromDistinctId } from './person-uuid.ts'
import { assignOwn, copyOf } from '../../property-bags/copies.ts'
import { applyPropertyUpdates, asPlainObject, computePropertyUpdates } from './property-updates.ts'
import type { IdentitySession } from './session.ts'
import type { Awaitable, IngestionWarning, PersonState, Properties } from './types.ts'

// PostHog writes a merged-away person's delete row this far above its last version so that no late update
// of the same row can outrank the delete.
const DELETE_VERSION_BUMP = 100

const MERGE_WITH_ALIAS = new Set(['$create_alias', '$merge_dangerously'])

/** One event as the person rules see it. */
export interface PersonContext {
  session: IdentitySession
  teamId: number
  eventName: string
  eventUuid: string
  distinctId: string
  properties: Properties
  timestampMs: number
  warnings: IngestionWarning[]
  // Set once an identify/alias passed its guards: the resulting person counts as identified.
  updateIsIdentified: boolean
  // Set when the person's properties already show the event's $set (PropertyUpdates.setShown).
  setShown?: boolean
}

interface MergeOutcome {
  person?: PersonState
  needsUpdate: boolean
}

/**
 * Finds, creates, merges and updates the person of an event, as PostHog does. Most events name a
 * person already in memory and merge nothing: they are decided without a promise (one made per
 * event and awaited costs more than the rest of their rules, the garbage of it included).
 */
export function processPerson(ctx: PersonContext): Awaitable<PersonState> {
  if (MERGE_WITH_ALIAS.has(ctx.eventName) || ctx.eventName === '$identify') return processMerging(ctx)
  return personOfDistinctId(ctx)
}

async function processMerging(ctx: PersonContext): Promise<PersonState> {
  const merged = await handleIdentifyOrAlias(ctx)
  if (merged.person) return merged.needsUpdate ? updatePerson(ctx, merged.person) : merged.person
  return personOfDistinctId(ctx)
}

// The person of the event's distinct id, updated by the event, or created by it.
function personOfDistinctId(ctx: PersonContext): Awaitable<PersonState> {
  const existing = ctx.session.getPersonByDistinctId(ctx.distinctId)
  if (existing instanceof Promise) return existing.then((p) => updateOrCreate(ctx, p))
  return updateOrCreate(ctx, existing)
}

function updateOrCreate(ctx: PersonContext, existing: PersonState | undefined): Awaitable<PersonState> {
  if (existing) return updatePerson(ctx, existing)
  return createPerson(ctx, ctx.distinctId, [], ctx.updateIsIdentified)
}

async function handleIdentifyOrAlias(ctx: PersonContext): Promise<MergeOutcome> {
  const { eventName, properties } = ctx
  if (MERGE_WITH_ALIAS.has(eventName) && properties.alias) {
    return merge(ctx, String(properties.alias), ctx.distinctId)
  }
  if (eventName === '$identify' && '$anon_distinct_id' in properties) {
    return merge(ctx, String(properties.$anon_distinct_id), ctx.distinctId)
  }
  return { needsUpdate: true }
}

// The person of `intoDistinctId` (the event's distinct_id) survives; `otherDistinctId` joins it.
async function merge(
  ctx: PersonContext,
  otherDistinctId: string,
  intoDistinctId: string,
): Promise<MergeOutcome> {
  if (otherDistinctId === intoDistinctId) return { needsUpdate: true }
  for (const [illegal, other] of [
    [intoDistinctId, otherDistinctId],
    [otherDistinctId, intoDistinctId],
  ] as const) {
    if (isDistinctIdIllegal(illegal)) {
      ctx.warnings.push({
        type: 'cannot_merge_with_illegal_distinct_id',
        details: { illegalDistinctId: illegal, otherDistinctId: other, eventUuid: ctx.eventUuid },
      })
      return { needsUpdate: true }
    }
  }
  ctx.updateIsIdentified = true

  const otherPerson = await ctx.session.getPersonByDistinctId(otherDistinctId)
  const intoPerson = await ctx.session.getPersonByDistinctId(intoDistinctId)

  if (otherPerson && intoPerson) {
    if (otherPerson.id === intoPerson.id) return { person: intoPerson, needsUpdate: true }
    return mergePeople(ctx, intoPerson, intoDistinctId, otherPerson, otherDistinctId)
  }
  if (otherPerson || intoPerson) {
    const existing = (otherPerson ?? intoPerson)!
    const distinctIdToAdd = otherPerson ? intoDistinctId : otherDistinctId
    return { person: await addDistinctId(ctx, existing, distinctIdToAdd), needsUpdate: true }
  }

  // Neither id has a person. The new person takes its uuid from one of them; if only the other one already
  // stamped personless events, take that one instead so those events need no override.
  let primary = intoDistinctId
  let secondary = otherDistinctId
  const primaryPersonless = await ctx.session.isPersonless(primary)
  const secondaryPersonless = await ctx.session.isPersonless(secondary)
  if (!primaryPersonless && secondaryPersonless) [primary, secondary] = [secondary, primary]
  const person = await createPerson(ctx, primary, [secondary], true)
  return { person, needsUpdate: false }
}

async function addDistinctId(
  ctx: PersonContext,
  person: PersonState,
  distinctId: string,
): Promise<PersonState> {
  const updated: PersonState = { ...person, distinctIds: [...person.distinctIds, distinctId] }
  ctx.session.setDistinctId(distinctId, person.id, 0)
  const personlessId = await personlessOverride(ctx, distinctId, person)
  if (personlessId) updated.overriddenIds = [...updated.overriddenIds, personlessId]
  ctx.session.putPerson(updated)
  return updated
}

// Events already stamped with the deterministic id of a personless distinct id must follow it to its person.
async function personlessOverride(
  ctx: PersonContext,
  distinctId: string,
  person: PersonState,
): Promise<string | undefined> {
  const personlessId = uuidFromDistinctId(ctx.teamId, distinctId)
  if (personlessId === person.id || !(await ctx.session.isPersonless(distinctId))) return undefined
  ctx.session.addOverride(personlessId, person.id, person.version)
  return personlessId
}

async function mergePeople(
  ctx: PersonContext,
  into: PersonState,
  intoDistinctId: string,
  other: PersonState,
  otherDistinctId: string,
): Promise<MergeOutcome> {
  // $identify and $create_alias never swallow a person that is already identified; only
  // $merge_dangerously may.
  if (ctx.eventName !== '$merge_dangerously' && other.isIdentified) {
    ctx.warnings.push({
      type: 'cannot_merge_already_identified',
      details: {
        sourcePersonDistinctId: otherDistinctId,
        targetPersonDistinctId: intoDistinctId,
        eventUuid: ctx.eventUuid,
      },
    })
    return { person: into, needsUpdate: true }
  }

  // On key conflicts the surviving person's values win, then this event's own updates apply on top.
  const mergedProperties = { ...other.properties, ...into.properties }
  const properties = applyPropertyUpdates(
    mergedProperties,
    computePropertyUpdates(ctx.properties, mergedProperties),
  )
  // Above both old versions, so that if this person is ever split the re-created rows outrank old ones.
  const version = Math.max(into.version, other.version) + 1
  const moved = other.overriddenIds.filter((id) => id !== into.id)
  const merged: PersonState = {
    id: into.id,
    createdAtMs: Math.min(into.createdAtMs, other.createdAtMs),
    properties,
    isIdentified: true,
    version,
    distinctIds: [...into.distinctIds, ...other.distinctIds.filter((id) => !into.distinctIds.includes(id))],
    overriddenIds: [
      ...into.overriddenIds,
      other.id,
      ...moved.filter((id) => !into.overriddenIds.includes(id)),
    ],
  }

  for (const distinctId of other.distinctIds) {
    const row = await ctx.session.getDistinctId(distinctId)
    ctx.session.setDistinctId(distinctId, into.id, (row?.version ?? 0) + 1)
  }
  // Overrides stay one hop: everything that pointed at `other` now points straight at the survivor.
  for (const oldId of [other.id, ...moved]) ctx.session.addOverride(oldId, into.id, version)
  ctx.session.deletePerson(other, other.version + DELETE_VERSION_BUMP)
  ctx.session.putPerson(merged)
  return { person: merged, needsUpdate: true }
}

function createPerson(
  ctx: PersonContext,
  primaryDistinctId: string,
  extraDistinctIds: string[],
  isIdentified: boolean,
): Awaitable<PersonState> {
  const set = asPlainObject(ctx.properties.$set) ?? {}
  const setOnce = asPlainObject(ctx.properties.$set_once) ?? {}
  const distinctIds = [primaryDistinctId, ...extraDistinctIds]
  // { ...setOnce, ...set, $creator_event_uuid }, made without adding keys to a spread copy
  const properties = assignOwn(copyOf(setOnce), set)
  properties.$creator_event_uuid = ctx.eventUuid
  const person: PersonState = {
    id: uuidFromDistinctId(ctx.teamId, primaryDistinctId),
    createdAtMs: ctx.timestampMs,
    properties,
    isIdentified,
    version: 0,
    distinctIds,
    overriddenIds: [],
  }
  for (const distinctId of distinctIds) ctx.session.setDistinctId(distinctId, person.id, 0)
  if (extraDistinctIds.length === 0) {
    ctx.session.putPerson(person)
    return person
  }
  return withPersonlessOverrides(ctx, person, extraDistinctIds)
}

// A new person's other distinct ids whose events were stamped personless follow it (overrides).
async function withPersonlessOverrides(
  ctx: PersonContext,
  created: PersonState,
  extraDistinctIds: string[],
): Promise<PersonState> {
  let person = created
  for (const distinctId of extraDistinctIds) {
    const personlessId = await personlessOverride(ctx, distinctId, person)
    if (personlessId) person = { ...person, overriddenIds: [...person.overriddenIds, personlessId] }
  }
  ctx.session.putPerson(person)
  return person
}

function updatePerson(ctx: PersonContext, person: PersonState): PersonState {
  const updates = computePropertyUpdates(ctx.properties, person.properties, ctx.eventName)
  ctx.setShown = updates.setShown
  const becomesIdentified = ctx.updateIsIdentified && !person.isIdentified
  if (!updates.hasChanges && !becomesIdentified) return person
  const updated: PersonState = {
    ...person,
    properties: applyPropertyUpdates(person.properties, updates),
    isIdentified: person.isIdentified || ctx.updateIsIdentified,
    version: person.version + 1,
  }
  ctx.session.putPerson(updated)
  return updated
}

import {
  applyGroupIndexes,
  type GroupIndexes,
  groupColumns,
  groupIndexesOf,
  groupTypeIndex,
  upsertGroupFromIdentify,
  validateGroupIdentify,
} from './groups.ts'
import { normalizeEvent } from './normalize.ts'
import { PERSONLESS_CREATED_AT_MS, uuidFromDistinctId } from './person-uuid.ts'
import { type PersonContext, processPerson } from './persons.ts'
import { assignOwn, copyOf } from '../../property-bags/copies.ts'
import { asPlainObject, sameValue } from './property-updates.ts'
import { emptyChanges, IdentitySession } from './session.ts'
import type {
  ApplyEventResult,
  Awaitable,
  IdentityEvent,
  IdentityStore,
  IngestionWarning,
  PersonMode,
  PersonState,
  Properties,
} from './types.ts'

// A personless event for a person created more than this long before it was most likely sent after the
// person existed; PostHog marks such events 'force_upgrade' instead of 'propertyless'.
const FORCE_UPGRADE_GRACE_MS = 60_000

const GROUP_PROPERTY_KEYS = [0, 1, 2, 3, 4].map((index) => `$group_${index}`)

// A personless event keeps no $group_N (PostHog strips them).
function withoutGroupKeys(properties: Properties): Properties {
  const out = { ...properties }
  for (const key of GROUP_PROPERTY_KEYS) delete out[key]
  return out
}

/**
 * The properties applyEvent stores for an event it keeps (StampedEvent.eventProperties), from the event
 * and the group type indexes it found (StampedEvent.groupIndexes): a row writer recomputes them without
 * the identity state (team spread, docs/scaling.md). Undefined for an event the rules drop.
 */
export function storedEventProperties(
  event: IdentityEvent,
  groupIndexes: GroupIndexes | undefined,
): Properties | undefined {
  const normalized = normalizeEvent(event)
  const drop =
    normalized.drop ??
    (event.event === '$groupidentify' ? validateGroupIdentify(normalized.properties) : undefined)
  if (drop) return undefined
  if (!normalized.processPerson) return withoutGroupKeys(normalized.properties)
  return applyGroupIndexes(normalized.properties, groupIndexes)
}

// Decides the person (and groups) an event belongs to, in log order. The store is only read; everything the
// event changes comes back in `changes`, which the caller must apply before the next event of the team.
// An event whose state is in memory and that names no groups is decided without a promise (see
// processPerson); the others come back as one.
export function applyEvent(
  store: IdentityStore,
  teamId: number,
  event: IdentityEvent,
): Awaitable<ApplyEventResult> {
  const normalized = normalizeEvent(event)
  // (the list normalizeEvent made for this event: no copy needed)
  const warnings = normalized.warnings
  const properties = normalized.properties
  const drop =
    normalized.drop ?? (event.event === '$groupidentify' ? validateGroupIdentify(properties) : undefined)
  if (drop) return { dropped: true, reason: drop, warnings, changes: emptyChanges(teamId) }

  const session = new IdentitySession(store, teamId)

  if (!normalized.processPerson) return personlessResult(session, teamId, event, properties, warnings)

  const personContext: PersonContext = {
    session,
    teamId,
    eventName: event.event,
    eventUuid: event.uuid,
    distinctId: event.distinct_id,
    properties,
    timestampMs: event.timestamp_ms,
    warnings,
    updateIsIdentified: false,
  }
  const person = processPerson(personContext)
  const withGroups = event.event === '$groupidentify' || asPlainObject(properties.$groups) !== undefined
  if (withGroups || person instanceof Promise) return withPersonAndGroups(personContext, event, person)
  return personResult(personContext, person, properties, undefined)
}

async function personlessResult(
  session: IdentitySession,
  teamId: number,
  event: IdentityEvent,
  normalized: Properties,
  warnings: IngestionWarning[],
): Promise<ApplyEventResult> {
  const stamped = await personlessPerson(session, teamId, event)
  const properties = withoutGroupKeys(normalized)
  return {
    dropped: false,
    ...stamped,
    personProperties: {},
    groupColumns: groupColumns(properties),
    eventProperties: properties,
    warnings,
    changes: session.toChanges(),
  }
}

// The rest of an event's rules once its person is known: the group types it names, the group it
// identifies.
async function withPersonAndGroups(
  ctx: PersonContext,
  event: IdentityEvent,
  deciding: Awaitable<PersonState>,
): Promise<ApplyEventResult> {
  const person = await deciding
  const { session } = ctx
  let properties = ctx.properties
  // PostHog registers the identified group's type before the types named in $groups.
  if (event.event === '$groupidentify' && properties.$group_type != null && properties.$group_set != null) {
    await groupTypeIndex(session, String(properties.$group_type))
  }
  const groupIndexes = await groupIndexesOf(session, properties)
  properties = applyGroupIndexes(properties, groupIndexes)
  if (event.event === '$groupidentify') await upsertGroupFromIdentify(session, properties, event.timestamp_ms)
  return personResult(ctx, person, properties, groupIndexes)
}

function personResult(
  ctx: PersonContext,
  person: PersonState,
  properties: Properties,
  groupIndexes: GroupIndexes | undefined,
): ApplyEventResult {
  // The last rule that changed the person applied this $set: nothing to compare again.
  const shown = ctx.setShown
    ? person.properties
    : shownProperties(person.properties, asPlainObject(properties.$set))
  return {
    dropped: false,
    personId: person.id,
    personProperties: shown,
    personPropertiesShared: shown === person.properties,
    personCreatedAtMs: person.createdAtMs,
    personMode: 'full',
    groupColumns: groupColumns(properties),
    eventProperties: properties,
    groupIndexes,
    warnings: ctx.warnings,
    changes: ctx.session.toChanges(),
  }
}

// The person's properties as the event shows them: the event's $set on top, even where a merge kept
// another value, as in PostHog. When $set changes nothing there (no $set, or the rules applied it, or
// it repeats what the person has: the usual case) this is the person's own object itself, whose JSON
// text is the same as the merged copy's (same keys in the same order, values of the same JSON text).
function shownProperties(current: Properties, set: Properties | undefined): Properties {
  if (set === undefined) return current
  // (for-in: no list of keys made per event; a bag from JSON inherits no enumerable key)
  for (const key in set) {
    if (!Object.hasOwn(current, key) || !sameValue(current[key], set[key])) {
      return assignOwn(copyOf(current), set)
    }
  }
  return current
}

async function personlessPerson(
  session: IdentitySession,
  teamId: number,
  event: IdentityEvent,
): Promise<{ personId: string; personCreatedAtMs: number; personMode: PersonMode }> {
  const existing = await session.getPersonByDistinctId(event.distinct_id)
  if (existing) {
    const late = event.timestamp_ms > existing.createdAtMs + FORCE_UPGRADE_GRACE_MS
    return {
      personId: existing.id,
      personCreatedAtMs: existing.createdAtMs,
      personMode: late ? 'force_upgrade' : 'propertyless',
    }
  }
  // Remembered so that a later identify knows this id's deterministic person id is already on events.
  if (!(await session.isPersonless(event.distinct_id))) session.markPersonless(event.distinct_id)
  return {
    personId: uuidFromDistinctId(teamId, event.distinct_id),
    personCreatedAtMs: PERSONLESS_CREATED_AT_MS,
    personMode: 'propertyless',
  }
}

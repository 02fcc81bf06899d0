import { copyOf } from '../../property-bags/copies.ts'
import { asPlainObject, sameValue } from './property-updates.ts'
import type { IdentitySession } from './session.ts'
import type { DropReason, GroupColumns, Properties } from './types.ts'

/** Group types a team may have (PostHog: 5). */
export const MAX_GROUP_TYPES_PER_TEAM = 5
/** Longest group key kept. */
export const MAX_GROUP_KEY_LENGTH = 400

// Postgres (PostHog's store) cannot hold NUL; PostHog swaps it for U+FFFD and so do we, to keep keys equal.
function sanitizeGroupKey(key: unknown): string {
  return String(key).replaceAll('\u0000', '\uFFFD')
}

// Checked before anything else is written so that a rejected event leaves no trace.
export function validateGroupIdentify(properties: Properties): DropReason | undefined {
  const groupSet = properties.$group_set
  if (groupSet !== undefined && groupSet !== null && !asPlainObject(groupSet)) return 'invalid_group_set'
  const groupKey = properties.$group_key
  if (groupKey && String(groupKey).length > MAX_GROUP_KEY_LENGTH) return 'group_key_too_long'
  return undefined
}

// Types get indexes 0-4 in order of first appearance; once five exist, new types are ignored for good.
export async function groupTypeIndex(session: IdentitySession, groupType: string): Promise<number | null> {
  const types = await session.getGroupTypes()
  const known = types.find((mapping) => mapping.groupType === groupType)
  if (known) return known.groupTypeIndex
  if (types.length >= MAX_GROUP_TYPES_PER_TEAM) return null
  const index = types.length
  await session.addGroupType({ groupType, groupTypeIndex: index })
  return index
}

/** The group type index of each type an event's $groups names (null: no room for the type). */
export type GroupIndexes = Record<string, number | null>

// The indexes of the types $groups names, registering new types (never creating a group).
export async function groupIndexesOf(
  session: IdentitySession,
  properties: Properties,
): Promise<GroupIndexes | undefined> {
  const groups = asPlainObject(properties.$groups)
  if (!groups) return undefined
  // no prototype: a group type may be any string, `__proto__` included
  const indexes = Object.create(null) as GroupIndexes
  for (const groupType of Object.keys(groups)) indexes[groupType] = await groupTypeIndex(session, groupType)
  return indexes
}

/**
 * Maps $groups {type: key} onto $group_<index> properties with the indexes groupIndexesOf found. Pure:
 * a row writer applies it again to the event without the identity state (team spread).
 */
export function applyGroupIndexes(properties: Properties, indexes: GroupIndexes | undefined): Properties {
  const groups = asPlainObject(properties.$groups)
  if (!groups || !indexes) return properties
  const next = copyOf(properties)
  for (const [groupType, groupKey] of Object.entries(groups)) {
    const index = indexes[groupType]
    if (index !== null && index !== undefined) next[`$group_${index}`] = groupKey
  }
  return next
}

/** Creates or updates the group a $groupidentify names, with its $group_set. */
export async function upsertGroupFromIdentify(
  session: IdentitySession,
  properties: Properties,
  timestampMs: number,
): Promise<void> {
  const { $group_type: groupType, $group_key: groupKey } = properties
  if (!groupType || !groupKey) return
  const index = await groupTypeIndex(session, String(groupType))
  if (index === null) return
  const key = sanitizeGroupKey(groupKey)
  const toSet = asPlainObject(properties.$group_set) ?? {}
  const existing = await session.getGroup(index, key)
  if (!existing) {
    session.putGroup({
      groupTypeIndex: index,
      groupKey: key,
      createdAtMs: timestampMs,
      // A copy: the state must not share the event's own object.
      properties: { ...toSet },
      version: 1,
    })
    return
  }
  // $group_set is a shallow merge in log order; unchanged values cause no new version.
  const changed = Object.entries(toSet).filter(
    ([name, value]) => !(name in existing.properties) || !sameValue(existing.properties[name], value),
  )
  if (changed.length === 0) return
  session.putGroup({
    ...existing,
    createdAtMs: Math.min(existing.createdAtMs, timestampMs),
    properties: { ...existing.properties, ...Object.fromEntries(changed) },
    version: existing.version + 1,
  })
}

function columnValue(value: unknown): string {
  if (value === undefined || value === null) return ''
  if (typeof value === 'string') return value
  if (typeof value === 'object') return JSON.stringify(value)
  return String(value)
}

// The columns of an event in no group (most events'): one list, frozen, for all of them.
const NO_GROUPS = Object.freeze(['', '', '', '', '']) as unknown as GroupColumns

/** The five $group_N columns of an event from its $group_N properties. */
export function groupColumns(properties: Properties): GroupColumns {
  if (
    properties.$group_0 === undefined &&
    properties.$group_1 === undefined &&
    properties.$group_2 === undefined &&
    properties.$group_3 === undefined &&
    properties.$group_4 === undefined
  )
    return NO_GROUPS
  // Written out: this runs for every event, and the keys are constants.
  return [
    columnValue(properties.$group_0),
    columnValue(properties.$group_1),
    columnValue(properties.$group_2),
    columnValue(properties.$group_3),
    columnValue(properties.$group_4),
  ]
}

import {
  channelTypeExpr,
  HOGQL_LOOKUPS,
  initialChannelInputs,
  referringDomainTypeExpr,
} from './channel-type.ts'

// PostHog's virtual person properties (posthog/hogql/database/database.py adds them to persons and
// events.poe): computed from the $initial_* properties the person got on its first event, so they
// need no stored column. $virt_initial_channel_type is the channel type of that first visit,
// $virt_initial_referring_domain_type what kind of site referred it (Search, Social, ..., or
// '$direct'). Reached as persons.$virt_..., events.person.$virt_... and events.poe.$virt_...; PostHog also rewrites
// person.properties.$virt_... to them, which Burrow does not (yet): that reads a stored property.

/** A HogQL expression field (schema.ts FieldDef, not imported: schema.ts imports this file). */
interface ExpressionField {
  kind: 'expression'
  expr: string
  type: string
}

/**
 * The $virt_* fields as HogQL expressions over the person properties at `path` (persons'
 * `properties`, or events' `poe.properties`: the person as stamped on the event).
 */
export function virtualPersonFields(path = 'properties'): Record<string, ExpressionField> {
  return {
    $virt_initial_channel_type: {
      kind: 'expression',
      expr: channelTypeExpr(initialChannelInputs(path), HOGQL_LOOKUPS),
      type: 'String',
    },
    $virt_initial_referring_domain_type: {
      kind: 'expression',
      expr: referringDomainTypeExpr(`toString(${path}.$initial_referring_domain)`, HOGQL_LOOKUPS),
      type: 'Nullable(String)',
    },
  }
}

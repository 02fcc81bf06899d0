import { MEDIUM_CHANNELS, SOURCE_CATEGORIES } from './channel-definitions.ts'

// PostHog's default channel types (posthog/hogql/database/schema/channel_type.py, documented at
// posthog.com/docs/data/channel-type), written as one expression whose text is both HogQL and
// ClickHouse SQL but for its lookups: every other function in it has the same name and meaning in
// both, so the persons' $virt_initial_channel_type (a HogQL expression field, with PostHog's
// hogql_lookup* functions) and the sessions' $channel_type (printed into the sessions relation's
// SQL, with the lookups expanded) are the same rules. PostHog's lookups read a dictionary; here
// they are transform() over constant arrays from channel-definitions.ts, printed only into SQL:
// HogQL's parser takes seconds over an expression holding the arrays. PostHog's per-project
// custom channel rules (a query modifier) are not supported.

/** The inputs of the rules, each an expression (HogQL / ClickHouse SQL text) that may be NULL. */
export interface ChannelInputs {
  campaign: string
  medium: string
  source: string
  referringDomain: string
  /** whether the visit carried a Google click id (an expression of type Bool) */
  hasGclid: string
  /** whether the visit carried a Meta click id (an expression of type Bool) */
  hasFbclid: string
  gadSource: string
}

const quote = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`
const array = (xs: readonly string[]) => `[${xs.map(quote).join(', ')}]`

/** NULL for an empty string or the text 'null' (what SDKs send for an unset parameter). */
export const nullIfEmpty = (x: string) => `nullIf(nullIf(${x}, ''), 'null')`

/** The lookups the rules use, by PostHog's names for them (HogQL functions), as printers. */
export interface Lookups {
  /** hogql_lookupDomainType: what kind of site a domain is (Search, Social, ...) */
  domainType: (x: string) => string
  /** hogql_lookupPaidSourceType: the paid channel of a source or domain */
  paidSource: (x: string) => string
  /** hogql_lookupPaidMediumType: the paid channel of a utm_medium */
  paidMedium: (x: string) => string
  /** hogql_lookupOrganicSourceType: the organic channel of a source or domain */
  organicSource: (x: string) => string
  /** hogql_lookupOrganicMediumType: the organic channel of a utm_medium */
  organicMedium: (x: string) => string
}

// A name's value in a table printed once: the name itself, else (for sources) its first
// significant subdomain and suffix (old.reddit.com is reddit.com); NULL when neither is listed.
function lookupSQL(x: string, table: ReadonlyMap<string, string>, cut: boolean): string {
  const keys = array([...table.keys()])
  const values = array([...table.values()])
  const v = `coalesce(${x}, '')`
  if (!cut) return `nullIf(transform(${v}, ${keys}, ${values}, ''), '')`
  const candidates = `[${v}, cutToFirstSignificantSubdomain(${v})]`
  return `nullIf(arrayFirst(_v -> _v != '', arrayMap(_k -> transform(_k, ${keys}, ${values}, ''), ${candidates})), '')`
}

const mapOf = <T>(source: ReadonlyMap<string, T>, f: (v: T) => string | null) =>
  new Map([...source].flatMap(([k, v]) => (f(v) === null ? [] : [[k, f(v)!] as const])))

const DOMAIN_TYPE = mapOf(SOURCE_CATEGORIES, (c) => c)
// PostHog's table: a source's paid type is "Paid <category>", none for Email; its organic type
// "Organic <category>", Email for Email.
const PAID_SOURCE = mapOf(SOURCE_CATEGORIES, (c) => (c === 'Email' ? null : `Paid ${c}`))
const ORGANIC_SOURCE = mapOf(SOURCE_CATEGORIES, (c) => (c === 'Email' ? 'Email' : `Organic ${c}`))
const PAID_MEDIUM = mapOf(MEDIUM_CHANNELS, (m) => m.paid)
const ORGANIC_MEDIUM = mapOf(MEDIUM_CHANNELS, (m) => m.organic)

/** The lookups as ClickHouse SQL (constant arrays, no dictionary). */
export const SQL_LOOKUPS: Lookups = {
  domainType: (x) => lookupSQL(x, DOMAIN_TYPE, true),
  paidSource: (x) => lookupSQL(x, PAID_SOURCE, true),
  paidMedium: (x) => lookupSQL(x, PAID_MEDIUM, false),
  organicSource: (x) => lookupSQL(x, ORGANIC_SOURCE, true),
  organicMedium: (x) => lookupSQL(x, ORGANIC_MEDIUM, false),
}

/** The lookups as calls of PostHog's HogQL functions (CHANNEL_FUNCTIONS prints them). */
export const HOGQL_LOOKUPS: Lookups = {
  domainType: (x) => `hogql_lookupDomainType(${x})`,
  paidSource: (x) => `hogql_lookupPaidSourceType(${x})`,
  paidMedium: (x) => `hogql_lookupPaidMediumType(${x})`,
  organicSource: (x) => `hogql_lookupOrganicSourceType(${x})`,
  organicMedium: (x) => `hogql_lookupOrganicMediumType(${x})`,
}

const lookupFunction = (print: (x: string) => string) => ({
  min: 1,
  max: 1,
  print: (a: string[]) => print(a[0]!),
  ret: 'Nullable(String)',
})

/**
 * PostHog's channel lookup functions for the HogQL allow-list (functions.ts): one argument, the
 * category or channel, NULL for a name the table does not list.
 */
export const CHANNEL_FUNCTIONS = {
  hogql_lookupDomainType: lookupFunction(SQL_LOOKUPS.domainType),
  hogql_lookupPaidSourceType: lookupFunction(SQL_LOOKUPS.paidSource),
  hogql_lookupPaidMediumType: lookupFunction(SQL_LOOKUPS.paidMedium),
  hogql_lookupOrganicSourceType: lookupFunction(SQL_LOOKUPS.organicSource),
  hogql_lookupOrganicMediumType: lookupFunction(SQL_LOOKUPS.organicMedium),
}

const SHOPPING_CAMPAIGN = `'^(.*(([^a-df-z]|^)shop|shopping).*)$'`
const VIDEO_CAMPAIGN = `'^(.*video.*)$'`

/**
 * The default channel type of a visit from its entry attribution, PostHog's rules in PostHog's
 * order: Cross Network; paid (a paid medium, a gclid or a gad_source) by source, shopping campaign,
 * medium, referring domain, else Paid Search / Video / Social / Unknown; Direct; organic by the
 * same steps, else Organic Video, Push, Organic Social, Direct, Referral or Unknown. campaign,
 * medium and source are compared in lower case, empty and 'null' values count as unset.
 */
export function channelTypeExpr(i: ChannelInputs, l: Lookups): string {
  const campaign = `lower(${nullIfEmpty(i.campaign)})`
  const medium = `lower(${nullIfEmpty(i.medium)})`
  const source = `lower(${nullIfEmpty(i.source)})`
  const gad = nullIfEmpty(i.gadSource)
  const rd = i.referringDomain
  return `multiIf(
  match(${campaign}, 'cross-network'), 'Cross Network',
  (${medium} IN ('cpc', 'cpm', 'cpv', 'cpa', 'ppc', 'retargeting') OR startsWith(${medium}, 'paid') OR ${i.hasGclid} OR ${gad} IS NOT NULL),
  coalesce(
    ${l.paidSource(source)},
    if(match(${campaign}, ${SHOPPING_CAMPAIGN}), 'Paid Shopping', NULL),
    ${l.paidMedium(medium)},
    ${l.paidSource(rd)},
    multiIf(${gad} = '1', 'Paid Search', match(${campaign}, ${VIDEO_CAMPAIGN}), 'Paid Video', ${i.hasFbclid}, 'Paid Social', 'Paid Unknown')
  ),
  (${rd} = '$direct' AND ${medium} IS NULL AND (${source} IS NULL OR ${source} IN ('(direct)', 'direct', '$direct')) AND NOT ${i.hasFbclid}),
  'Direct',
  coalesce(
    ${l.organicSource(source)},
    if(match(${campaign}, ${SHOPPING_CAMPAIGN}), 'Organic Shopping', NULL),
    ${l.organicMedium(medium)},
    ${l.organicSource(rd)},
    multiIf(
      match(${campaign}, ${VIDEO_CAMPAIGN}), 'Organic Video',
      match(${medium}, 'push$'), 'Push',
      ${i.hasFbclid}, 'Organic Social',
      ${rd} = '$direct', 'Direct',
      ${rd} IS NOT NULL, 'Referral',
      'Unknown'
    )
  )
)`
}

/** PostHog's referring-domain type: '$direct' stays, else the domain's category (or NULL). */
export function referringDomainTypeExpr(referringDomain: string, l: Lookups): string {
  return `if(${referringDomain} = '$direct', '$direct', ${l.domainType(referringDomain)})`
}

/** The channel inputs of a person's first visit: its $initial_* properties (HogQL, over `path`). */
export function initialChannelInputs(path = 'properties'): ChannelInputs {
  const prop = (name: string) => `toString(${path}.$initial_${name})`
  return {
    campaign: prop('utm_campaign'),
    medium: prop('utm_medium'),
    source: prop('utm_source'),
    referringDomain: prop('referring_domain'),
    hasGclid: `isNotNull(${nullIfEmpty(`${path}.$initial_gclid`)})`,
    hasFbclid: `isNotNull(${nullIfEmpty(`${path}.$initial_fbclid`)})`,
    gadSource: prop('gad_source'),
  }
}

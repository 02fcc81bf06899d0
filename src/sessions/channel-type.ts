import { MEDIUM_CHANNELS, SOURCE_CATEGORIES, type SourceCategory } from './channel-definitions.ts'

// PostHog's default channel types (posthog/hogql/database/schema/channel_type.py, documented at
// posthog.com/docs/data/channel-type), written as one expression whose text is both HogQL and
// ClickHouse SQL: every function in it has the same name and meaning in both, so the persons'
// $virt_initial_channel_type (a HogQL expression field) and the sessions' $channel_type (printed
// into the sessions relation's SQL) are the same rules. PostHog's lookups read a dictionary; here
// they are transform() over constant arrays from channel-definitions.ts. PostHog's per-project
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

const CATEGORIES: SourceCategory[] = ['Search', 'Social', 'Shopping', 'Video', 'Email']
// The names sorted by category, and where each category's run ends: the category of the name at a
// position is the number of run starts before it, so the lookup prints the names once.
const SORTED = CATEGORIES.flatMap((c) => [...SOURCE_CATEGORIES].filter(([, v]) => v === c).map(([k]) => k))
const STARTS = CATEGORIES.map((c) => SORTED.findIndex((k) => SOURCE_CATEGORIES.get(k) === c))

/**
 * The category (Search, Social, Shopping, Video, Email) of a source name or domain, or NULL: the
 * name itself, else its first significant subdomain and suffix (old.reddit.com is reddit.com).
 */
export function sourceCategory(x: string): string {
  const v = `coalesce(${x}, '')`
  const position = `arrayFirst(_p -> _p > 0, arrayMap(_k -> indexOf(${array(SORTED)}, _k), [${v}, cutToFirstSignificantSubdomain(${v})]))`
  const runs = `[${STARTS.join(', ')}]`
  return `nullIf(arrayElement(${array(CATEGORIES)}, arrayCount(_s -> _s < ${position}, ${runs})), '')`
}

/** The paid channel of a source (Email has none), or NULL. */
const paidSource = (x: string) =>
  `nullIf(transform(${sourceCategory(x)}, ['Search', 'Social', 'Shopping', 'Video'], ['Paid Search', 'Paid Social', 'Paid Shopping', 'Paid Video'], ''), '')`

/** The organic channel of a source (Email is Email), or NULL. */
const organicSource = (x: string) =>
  `nullIf(transform(${sourceCategory(x)}, ${array(CATEGORIES)}, ['Organic Search', 'Organic Social', 'Organic Shopping', 'Organic Video', 'Email'], ''), '')`

const MEDIUMS = [...MEDIUM_CHANNELS.keys()]
/** The channel a utm_medium means when paid / organic, or NULL. */
const mediumChannel = (x: string, paid: boolean) => {
  const keys = paid ? MEDIUMS.filter((m) => MEDIUM_CHANNELS.get(m)!.paid !== null) : MEDIUMS
  const values = keys.map((m) => (paid ? MEDIUM_CHANNELS.get(m)!.paid! : MEDIUM_CHANNELS.get(m)!.organic))
  return `nullIf(transform(coalesce(${x}, ''), ${array(keys)}, ${array(values)}, ''), '')`
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
export function channelTypeExpr(i: ChannelInputs): string {
  const campaign = `lower(${nullIfEmpty(i.campaign)})`
  const medium = `lower(${nullIfEmpty(i.medium)})`
  const source = `lower(${nullIfEmpty(i.source)})`
  const gad = nullIfEmpty(i.gadSource)
  const rd = i.referringDomain
  return `multiIf(
  match(${campaign}, 'cross-network'), 'Cross Network',
  (${medium} IN ('cpc', 'cpm', 'cpv', 'cpa', 'ppc', 'retargeting') OR startsWith(${medium}, 'paid') OR ${i.hasGclid} OR ${gad} IS NOT NULL),
  coalesce(
    ${paidSource(source)},
    if(match(${campaign}, ${SHOPPING_CAMPAIGN}), 'Paid Shopping', NULL),
    ${mediumChannel(medium, true)},
    ${paidSource(rd)},
    multiIf(${gad} = '1', 'Paid Search', match(${campaign}, ${VIDEO_CAMPAIGN}), 'Paid Video', ${i.hasFbclid}, 'Paid Social', 'Paid Unknown')
  ),
  (${rd} = '$direct' AND ${medium} IS NULL AND (${source} IS NULL OR ${source} IN ('(direct)', 'direct', '$direct')) AND NOT ${i.hasFbclid}),
  'Direct',
  coalesce(
    ${organicSource(source)},
    if(match(${campaign}, ${SHOPPING_CAMPAIGN}), 'Organic Shopping', NULL),
    ${mediumChannel(medium, false)},
    ${organicSource(rd)},
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
export function referringDomainTypeExpr(referringDomain: string): string {
  return `if(${referringDomain} = '$direct', '$direct', ${sourceCategory(referringDomain)})`
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

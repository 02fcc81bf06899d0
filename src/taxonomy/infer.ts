// The type of a property as PostHog's ingestion infers it from the first value it sees
// (plugin-server `detectPropertyDefinitionTypes`, property-definitions-auto-discovery.ts): numbers
// are Numeric, strings String unless they look like a date (then DateTime) or spell true/false
// (Boolean), booleans Boolean; a number or numeric string of 10 (or 10.x) or 13 digits under a key
// naming a time is a unix timestamp (DateTime). utm_*, $feature/* and $feature_flag_response are
// always String. Anything else (objects, arrays, null) has no type.

/** PostHog's PropertyType values. */
export type PropertyType = 'DateTime' | 'String' | 'Numeric' | 'Boolean'

const UNIX_TIMESTAMP = [/^\d{10}(\.\d*)?$/, /^\d{13}$/]

const DATE_TIME = [
  /^\d{4}-\d{2}-\d{2}$/,
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?(?:\d{2})?)$/i,
  /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/,
  /^\d{2}-\d{2}-\d{4} \d{2}:\d{2}:\d{2}$/,
  /^\d{4}\/\d{2}\/\d{2} \d{2}:\d{2}:\d{2}$/,
  /^\d{2}\/\d{2}\/\d{4} \d{2}:\d{2}:\d{2}$/,
  // RFC 2822 section 3.3
  /^((mon|tue|wed|thu|fri|sat|sun), )?\d{2} (jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec) \d{4} \d{2}:\d{2}:\d{2}( [+|-]\d{4})?$/i,
]

function namesTime(key: string): boolean {
  const k = key.toLowerCase()
  return k.includes('time')
}

/** The type PostHog gives property `key` when its first value is `value`; null: none. */
export function inferPropertyType(value: unknown, key: string): PropertyType | null {
  // the first value of these often looks like a number or a boolean, later ones do not
  if (/^utm_/i.test(key) || key.startsWith('$feature/') || key === '$feature_flag_response') return 'String'
  let type: PropertyType | null = null
  if (typeof value === 'number') {
    type = 'Numeric'
    if (namesTime(key) && UNIX_TIMESTAMP.some((p) => p.test(String(value)))) type = 'DateTime'
  }
  if (typeof value === 'string') {
    type = DATE_TIME.some((p) => p.test(value)) ? 'DateTime' : 'String'
  }
  if (typeof value === 'boolean') type = 'Boolean'
  if (typeof value === 'string' && /^(true|false)$/i.test(value.trim())) type = 'Boolean'
  return type
}

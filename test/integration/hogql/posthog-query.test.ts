// PostHog's own HogQL statements (posthog-query.cases.ts), run on the server under test with the
// rows PostHog's tests create: each answer must be PostHog's, each refusal a 400 naming the
// construct.
import { beforeAll, describe, expect, it } from 'vitest'
import { compileHogQL, HogQLError } from '../../../src/hogql/index.ts'
import { clickhouse, uniqueTeamId } from '../../harness/index.ts'
import { insertDistinctIds, insertEvents, insertGroups, insertPersons } from './fixtures.ts'
import {
  type Fixture,
  PERSON,
  PERSONS,
  POSTHOG_PRINTER_CASES,
  POSTHOG_DOCS_CASES,
  POSTHOG_QUERY_CASES,
  POSTHOG_RESOLVER_CASES,
  POSTHOG_SCHEMA_CASES,
  type PostHogCase,
  RANDOM,
  UNSET,
  VIRT_PERSON,
} from './posthog-query.cases.ts'

const ch = clickhouse()
const base = uniqueTeamId()
const TEAMS: Record<Fixture, number> = {
  random: base,
  extra: base + 1,
  windows: base + 2,
  pageview: base + 3,
  persons: base + 4,
  unset: base + 5,
  groups: base + 6,
  docs: base + 7,
  virt: base + 8,
}
const uuid = (team: number, n: number) =>
  `00000000-0000-7000-8000-${(team % 1_000_000).toString().padStart(6, '0')}${n.toString().padStart(6, '0')}`

beforeAll(async () => {
  // _create_random_events: a person of distinct id 'bla' and two of its events
  const team = TEAMS.random
  await insertPersons(ch, [
    {
      team,
      id: PERSON,
      createdAt: '2020-01-10 00:00:00',
      properties: { sneaky_mail: 'tim@posthog.com', random_uuid: RANDOM },
      version: 1,
      identified: true,
    },
  ])
  await insertDistinctIds(ch, [{ team, distinctId: 'bla', personId: PERSON, version: 1 }])
  const random = (index: number) => ({
    team,
    uuid: uuid(team, index),
    event: 'random event',
    distinctId: 'bla',
    personId: PERSON,
    timestamp: '2020-01-10 00:00:00',
    properties: { random_prop: "don't include", random_uuid: RANDOM, index },
    personProperties: { sneaky_mail: 'tim@posthog.com', random_uuid: RANDOM },
  })
  await insertEvents(ch, [random(0), random(1)])
})

beforeAll(async () => {
  // test_null_properties' extra event and test_property_access_with_arrays' big event
  const team = TEAMS.extra
  const id = RANDOM
  await insertEvents(ch, [
    {
      team,
      uuid: uuid(team, 2),
      event: 'big event',
      distinctId: `P${id}`,
      personId: PERSON,
      timestamp: '2020-01-10 00:00:00',
      properties: {
        string: id,
        array_str: [id],
        obj_array: { id: [id] },
        array_array_str: [[id]],
        array_obj: [{ id }],
        array_obj_array: [{ id: [id] }],
        array_obj_array_obj: [{ id: [{ id }] }],
      },
    },
    {
      team,
      uuid: uuid(team, 1),
      event: 'empty event',
      distinctId: 'bla',
      personId: PERSON,
      timestamp: '2020-01-10 00:00:00',
      properties: { empty_string: '', null: null, str_zero: '0', num_zero: 0 },
    },
  ])
})

beforeAll(async () => {
  // test_window_functions_*: five persons with three events each, ten minutes apart
  const team = TEAMS.windows
  const rows = [0, 1, 2, 3, 4].flatMap((p) =>
    (['random event', 'random bla', 'random boo'] as const).map((event, i) => ({
      team,
      uuid: uuid(team, p * 10 + i),
      event,
      distinctId: `person_${p}_${RANDOM}`,
      personId: `00000000-0000-4000-8000-00000000010${p}`,
      timestamp: `2020-01-10 00:${i}0:00`,
      properties: { character: 'Luigi' },
    })),
  )
  await insertEvents(ch, rows)
})

beforeAll(async () => {
  // test_query_joins_events_first_to_persons / _lazy_on_both_sides: person1 with two events
  const team = TEAMS.pageview
  const person = '00000000-0000-4000-8000-000000000201'
  await insertPersons(ch, [
    {
      team,
      id: person,
      createdAt: '2020-01-10 00:00:00',
      properties: { email: 'test@posthog.com' },
      version: 1,
    },
  ])
  await insertDistinctIds(ch, [{ team, distinctId: 'person1', personId: person, version: 1 }])
  const ev = (n: number, event: string, browser: string) => ({
    team,
    uuid: uuid(team, n),
    event,
    distinctId: 'person1',
    personId: person,
    timestamp: '2020-01-10 00:00:00',
    properties: { $browser: browser },
  })
  await insertEvents(ch, [ev(1, 'pageview', 'Chrome'), ev(2, 'click', 'Firefox')])
})

beforeAll(async () => {
  // database/schema/test/test_persons.py, TestPersonOptimization: three persons (the second updated
  // to a newer version), a fourth deleted in its newer version, and a $pageview of each live one
  const team = TEAMS.persons
  const [p1, p2, p3, deleted] = PERSONS
  const person = (id: string, at: string, props: Record<string, unknown>, version: number, del = false) => ({
    team,
    id,
    createdAt: `2024-01-01 ${at}:00:00`,
    properties: props,
    version,
    deleted: del,
  })
  await insertPersons(ch, [
    person(p1!, '12', { $some_prop: 'something', $another_prop: 'something1' }, 1),
    person(p2!, '13', { $some_prop: 'ifwematcholdversionsthiswillmatch', $another_prop: 'something2' }, 1),
    person(p2!, '13', { $some_prop: 'something', $another_prop: 'something2' }, 2),
    person(p3!, '14', { $some_prop: 'not something', $another_prop: 'something3' }, 1),
    person(deleted!, '13', { $some_prop: 'ifwematcholdversionsthiswillmatch' }, 1),
    person(deleted!, '13', {}, 2, true),
  ])
  const ids = ['1', '2', '3', 'deleted']
  await insertDistinctIds(
    ch,
    ids.map((distinctId, i) => ({ team, distinctId, personId: PERSONS[i]!, version: 1 })),
  )
  await insertEvents(
    ch,
    ids.slice(0, 3).map((distinctId, i) => ({
      team,
      uuid: uuid(team, i + 1),
      event: '$pageview',
      distinctId,
      personId: PERSONS[i]!,
      timestamp: '2024-01-02 00:00:00',
    })),
  )
})

beforeAll(async () => {
  // test_persons.py, TestArgMaxNonNullableSimplification: the newest version unsets a property
  const team = TEAMS.unset
  const at = '2024-01-01 12:00:00'
  await insertPersons(ch, [
    {
      team,
      id: UNSET,
      createdAt: at,
      properties: { jsonprop: 'stale_old_value', untouched: 'keep' },
      version: 1,
    },
    { team, id: UNSET, createdAt: at, properties: { untouched: 'keep' }, version: 2 },
  ])
})

beforeAll(async () => {
  // database/schema/test/test_groups.py: g01..g09, and g00 written twice (a stale and a newer row)
  const team = TEAMS.groups
  const group = (key: string, name: string, version: number, at = '2024-01-01 00:00:00') => ({
    team,
    index: 0,
    key,
    createdAt: at,
    properties: { name },
    version,
  })
  await insertGroups(ch, [
    ...[1, 2, 3, 4, 5, 6, 7, 8, 9].map((i) => group(`g0${i}`, `name-${i}`, 1)),
    group('g00', 'STALE', 1, '2020-01-01 00:00:00'),
    group('g00', 'LATEST', 2),
  ])
})

beforeAll(async () => {
  // Two page views carrying the properties the examples of PostHog's SQL docs read
  // (posthog.com contents/docs/sql/expressions.mdx)
  const team = TEAMS.docs
  await insertEvents(ch, [
    {
      team,
      uuid: uuid(team, 1),
      event: '$pageview',
      distinctId: 'd1',
      personId: PERSON,
      timestamp: '2024-01-02 09:30:00',
      properties: {
        $current_url: 'https://us.posthog.com/blog/x?ref=news&y=1',
        $os: 'iOS',
        $os_name: 'iOS',
        $os_version: '17',
        $device_type: 'Mobile',
        $browser: 'Chrome',
        $set: { $geoip_city_name: 'Berlin' },
        '$feature/cool-flag': 'test',
        $active_feature_flags: ['a', 'b'],
      },
    },
    {
      team,
      uuid: uuid(team, 2),
      event: '$pageview',
      distinctId: 'd2',
      personId: PERSON,
      timestamp: '2024-01-02 15:00:00',
      properties: {
        $current_url: 'https://x.com/',
        $device_type: 'Desktop',
        $browser: 'Safari',
        $os: 'Mac OS X',
      },
    },
  ])
})

beforeAll(async () => {
  // test_persons.py TestPersons: a person with an initial referring domain, and a $pageview stamped
  // with other person properties (what events.poe reads)
  const team = TEAMS.virt
  await insertPersons(ch, [
    {
      team,
      id: VIRT_PERSON,
      createdAt: '2025-05-28 12:00:00',
      properties: { $initial_referring_domain: 'https://google.com' },
      version: 1,
    },
  ])
  await insertDistinctIds(ch, [{ team, distinctId: '1', personId: VIRT_PERSON, version: 1 }])
  await insertEvents(ch, [
    {
      team,
      uuid: uuid(team, 1),
      event: '$pageview',
      distinctId: '1',
      personId: VIRT_PERSON,
      timestamp: '2025-05-28 12:00:00',
      personProperties: { $initial_referring_domain: 'https://facebook.com', $initial_utm_medium: 'cpc' },
    },
  ])
})

async function run(c: PostHogCase): Promise<unknown[][]> {
  const compiled = await compileHogQL(c.hogql, {
    teamId: TEAMS[c.fixture],
    values: c.values,
  })
  const result = await ch.query({ query: compiled.clickhouse, format: 'JSONCompact' })
  return ((await result.json()) as { data: unknown[][] }).data
}

// 64-bit integers come back quoted from one server and not the other: compare numbers as text.
// PostHog's expected times are datetime objects: an instant, whatever the fraction's digits (a
// DateTime64(6) reads '2020-01-10 00:00:00.000000', written here as '2020-01-10 00:00:00').
const DATE_TIME = /^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)(?:\.(\d*?)0*)?$/
const asText = (v: unknown): unknown => {
  if (Array.isArray(v)) return v.map(asText)
  if (typeof v === 'number') return String(v)
  const t = typeof v === 'string' ? DATE_TIME.exec(v) : null
  return t ? (t[2] ? `${t[1]}.${t[2]}` : t[1]) : v
}

async function check(c: PostHogCase): Promise<void> {
  if (c.fails) {
    const err = await run(c).catch((x: unknown) => x)
    expect(err).toBeInstanceOf(HogQLError)
    expect((err as HogQLError).message).toMatch(c.fails)
    return
  }
  const rows = asText(await run(c)) as unknown[][]
  const sorted = (r: unknown[][]) => [...r].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))
  if (c.rows) expect(c.unordered ? sorted(rows) : rows).toEqual(asText(c.unordered ? sorted(c.rows) : c.rows))
  if (c.count !== undefined) expect(rows).toHaveLength(c.count)
  if (c.first) {
    for (const [i, want] of Object.entries(c.first)) expect(rows[0]?.[Number(i)]).toEqual(asText(want))
  }
}

const SUITES = [
  ["PostHog's test_query.py statements", POSTHOG_QUERY_CASES],
  ["PostHog's test_printer.py statements", POSTHOG_PRINTER_CASES],
  ["PostHog's test_resolver.py statements", POSTHOG_RESOLVER_CASES],
  ["PostHog's database/schema/test statements (persons, groups, events)", POSTHOG_SCHEMA_CASES],
  ["PostHog's SQL docs (posthog.com contents/docs/sql)", POSTHOG_DOCS_CASES],
] as const

for (const [title, cases] of SUITES) {
  describe(title, () => {
    it.each(cases.map((c) => [c.test, c.hogql, c] as const))('%s: %s', async (_t, _q, c) => {
      await check(c)
    })
  })
}

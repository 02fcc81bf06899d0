// PostHog's own HogQL statements with the answers its tests expect: posthog/hogql/test/test_query.py
// (statements that need no PostHog-only table or setting) and the statements
// posthog/hogql/test/test_printer.py says must fail. posthog-query.test.ts inserts the same rows
// PostHog's tests create (one project per fixture) and runs every case on the server under test.
// Expected values are PostHog's; where a fixture differs from PostHog's (more events in a project)
// the comment says why the count differs.

/** The projects the cases read, each with the rows of one PostHog fixture (posthog-query.test.ts). */
export type Fixture =
  'random' | 'extra' | 'windows' | 'pageview' | 'persons' | 'unset' | 'groups' | 'docs' | 'virt'

/** PostHog's random uuid property, fixed here so expected rows can name it. */
export const RANDOM = 'RANDOM_TEST_ID::0190e5b2-8d6f-7c31-9a44-3f1e2d5c6b7a'
/** The persons of the 'persons' fixture: three live ones and one deleted (the last). */
export const PERSONS = [1, 2, 3, 4].map((n) => `00000000-0000-4000-8000-00000000030${n}`)
/** The person of the 'unset' fixture, whose newest version drops a property. */
export const UNSET = '00000000-0000-4000-8000-000000000401'
/** The person of the 'virt' fixture (test_persons.py TestPersons: $virt_* properties). */
export const VIRT_PERSON = '00000000-0000-4000-8000-000000000501'
/** The person of the 'random' fixture (the UUID PostHog's tests expect for it). */
export const PERSON = '00000000-0000-4000-8000-000000000000'

export interface PostHogCase {
  /** PostHog's test the statement comes from */
  test: string
  fixture: Fixture
  hogql: string
  values?: Record<string, unknown>
  /** every row, numbers compared as text */
  rows?: unknown[][]
  /** `rows` in any order (PostHog's statement has no ORDER BY) */
  unordered?: boolean
  /** columns of the first row that PostHog's test checks, by position */
  first?: Record<number, unknown>
  /** PostHog's test only counts rows */
  count?: number
  /** PostHog refuses it: the message Burrow's 400 gives */
  fails?: RegExp
}

const TS = '2020-01-10 00:00:00.000'

// test_property_access_with_arrays: every way of reaching the random id inside the 'big event'.
const PROPERTY_PATHS = [
  'properties.string',
  'properties.array_str.1',
  'properties.array_str[1]',
  'properties.obj_array.id.1',
  'properties.obj_array.id[1]',
  'properties.array_array_str.1.1',
  'properties.array_array_str[1][1]',
  'properties.array_obj_array.1.id.1',
  "properties.array_obj_array[1]['id'][1]",
  'properties.array_obj_array_obj.1.id.1.id',
  'properties.array_obj_array_obj[1].id[1].id',
  "properties.array_obj_array_obj[1]['id'][1]['id']",
  'properties.array_obj.1.id',
  'properties.array_obj[1].id',
]

// test_window_functions_simple / _with_window: five persons, three events each, ten minutes apart.
const windowRows = (withWindow: boolean) =>
  [0, 1, 2, 3, 4].flatMap((p) => {
    const id = `person_${p}_${RANDOM}`
    const at = (m: string) => `2020-01-10 00:${m}:00.000`
    const extra = (r: unknown[]) => (withWindow ? r : [])
    return [
      [
        id,
        at('00'),
        'random event',
        [],
        ['random bla', 'random boo'],
        ...extra([1, 1, '', '', 'random bla', 'random boo', 1, 1]),
      ],
      [
        id,
        at('10'),
        'random bla',
        ['random event'],
        ['random boo'],
        ...extra([2, 2, 'random event', 'random event', 'random boo', 'random boo', 2, 2]),
      ],
      [
        id,
        at('20'),
        'random boo',
        ['random event', 'random bla'],
        [],
        ...extra([3, 3, 'random event', 'random bla', '', '', 3, 3]),
      ],
    ]
  })

const pivot = [
  ['0', [['random event', 1]]],
  ['1', [['random event', 1]]],
]
const pivotCtes =
  'WITH PIVOT_TABLE_COL_ABC AS (SELECT properties.index as col_a, event as col_b, count() as col_c FROM events GROUP BY properties.index, event), ' +
  'PIVOT_FUNCTION_1 AS (select col_a, groupArray( (col_b, col_c) ) as g from PIVOT_TABLE_COL_ABC group by col_a), ' +
  'PIVOT_FUNCTION_2 AS (select col_a, arrayZip( (sumMap( g.1, g.2 ) as x).1, x.2) as r from PIVOT_FUNCTION_1 group by col_a)'

export const POSTHOG_QUERY_CASES: PostHogCase[] = [
  {
    test: 'test_query',
    fixture: 'random',
    hogql: 'select count(), event from events where properties.random_uuid = {random_uuid} group by event',
    values: { random_uuid: RANDOM },
    rows: [[2, 'random event']],
  },
  {
    test: 'test_subquery',
    fixture: 'random',
    hogql:
      'select cnt, event from (select count() as cnt, event from events where properties.random_uuid = {random_uuid} group by event) group by cnt, event',
    values: { random_uuid: RANDOM },
    rows: [[2, 'random event']],
  },
  {
    test: 'test_subquery_alias',
    fixture: 'random',
    hogql:
      'select cnt, event from (select count(*) as cnt, event from events where properties.random_uuid = {random_uuid} group by event) as c group by cnt, event',
    values: { random_uuid: RANDOM },
    rows: [[2, 'random event']],
  },
  {
    test: 'test_query_distinct',
    fixture: 'random',
    hogql: 'select distinct properties.sneaky_mail from persons where properties.random_uuid = {random_uuid}',
    values: { random_uuid: RANDOM },
    rows: [['tim@posthog.com']],
  },
  {
    test: 'test_query_person_distinct_ids',
    fixture: 'random',
    hogql: 'select distinct person_id, distinct_id from person_distinct_ids',
    rows: [[PERSON, 'bla']],
  },
  {
    test: 'test_query_joins_simple',
    fixture: 'random',
    hogql:
      'SELECT event, timestamp, pdi.distinct_id, p.id, p.properties.sneaky_mail FROM events e LEFT JOIN person_distinct_ids pdi ON pdi.distinct_id = e.distinct_id LEFT JOIN persons p ON p.id = pdi.person_id',
    first: { 0: 'random event', 2: 'bla', 4: 'tim@posthog.com' },
  },
  {
    test: 'test_query_joins_events_pdi',
    fixture: 'random',
    hogql: 'SELECT event, timestamp, pdi.distinct_id, pdi.person_id FROM events LIMIT 10',
    first: { 0: 'random event', 2: 'bla', 3: PERSON },
  },
  {
    test: 'test_query_joins_events_e_pdi',
    fixture: 'random',
    hogql: 'SELECT event, e.timestamp, e.pdi.distinct_id, pdi.person_id FROM events e LIMIT 10',
    first: { 0: 'random event', 2: 'bla', 3: PERSON },
  },
  {
    test: 'test_query_joins_pdi_persons',
    fixture: 'random',
    hogql: 'SELECT pdi.distinct_id, pdi.person.created_at FROM person_distinct_ids pdi LIMIT 10',
    rows: [['bla', TS]],
  },
  {
    test: 'test_query_joins_pdi_person_properties',
    fixture: 'random',
    hogql: 'SELECT pdi.distinct_id, pdi.person.properties.sneaky_mail FROM person_distinct_ids pdi LIMIT 10',
    rows: [['bla', 'tim@posthog.com']],
  },
  {
    test: 'test_query_joins_events_first_to_persons',
    fixture: 'pageview',
    hogql:
      "SELECT events.event, persons.properties.email FROM events JOIN persons ON events.person_id = persons.id WHERE events.event = 'pageview'",
    rows: [['pageview', 'test@posthog.com']],
  },
  {
    test: 'test_query_joins_lazy_on_both_sides',
    fixture: 'pageview',
    hogql:
      "SELECT e1.event, e2.event FROM events e1 JOIN events e2 ON e1.person_id = e2.person_id WHERE e1.event = 'pageview' AND e2.event = 'click'",
    rows: [['pageview', 'click']],
  },
  {
    // PostHog's fixture has one event of the person; this one has two (pageview and click).
    test: 'test_query_joins_persons_to_events',
    fixture: 'pageview',
    hogql:
      'SELECT persons.id, events.event FROM persons JOIN events ON persons.id = events.person_id LIMIT 10',
    count: 2,
  },
  {
    test: 'test_query_joins_events_pdi_person',
    fixture: 'random',
    hogql: 'SELECT event, timestamp, pdi.distinct_id, pdi.person.id FROM events LIMIT 10',
    first: { 0: 'random event', 2: 'bla', 3: PERSON },
  },
  {
    test: 'test_query_joins_events_pdi_person_properties',
    fixture: 'random',
    hogql: 'SELECT event, timestamp, pdi.distinct_id, pdi.person.properties.sneaky_mail FROM events LIMIT 10',
    first: { 0: 'random event', 2: 'bla', 3: 'tim@posthog.com' },
  },
  {
    test: 'test_query_joins_events_pdi_e_person_properties',
    fixture: 'random',
    hogql:
      'SELECT event, e.timestamp, pdi.distinct_id, e.pdi.person.properties.sneaky_mail FROM events e LIMIT 10',
    first: { 0: 'random event', 2: 'bla', 3: 'tim@posthog.com' },
  },
  {
    test: 'test_query_joins_events_person_properties',
    fixture: 'random',
    hogql: 'SELECT event, e.timestamp, e.pdi.person.properties.sneaky_mail FROM events e LIMIT 10',
    first: { 0: 'random event', 2: 'tim@posthog.com' },
  },
  {
    test: 'test_query_joins_events_person_properties_in_aggregration',
    fixture: 'random',
    hogql:
      'SELECT s.pdi.person.properties.sneaky_mail, count() FROM events s GROUP BY s.pdi.person.properties.sneaky_mail LIMIT 10',
    rows: [['tim@posthog.com', 2]],
  },
  {
    test: 'test_select_person_on_events',
    fixture: 'random',
    hogql:
      'SELECT poe.properties.sneaky_mail, count() FROM events s GROUP BY poe.properties.sneaky_mail LIMIT 10',
    rows: [['tim@posthog.com', 2]],
  },
  {
    // poe.id: the person id the event was stamped with (PostHog's test_query_select_person_with_poe_without_joins)
    test: 'test_query_select_person_with_poe_without_joins',
    fixture: 'random',
    hogql: 'SELECT event, poe.id FROM events LIMIT 10',
    first: { 0: 'random event', 1: PERSON },
  },
  {
    test: 'test_query_select_person_with_joins_without_poe',
    fixture: 'random',
    hogql: 'SELECT event, timestamp, person.id, person.properties.sneaky_mail FROM events LIMIT 10',
    first: { 0: 'random event', 2: PERSON, 3: 'tim@posthog.com' },
  },
  {
    test: 'test_hogql_lambdas',
    fixture: 'random',
    hogql: 'SELECT arrayMap(x -> x * 2, [1, 2, 3]), 1',
    rows: [[[2, 4, 6], 1]],
  },
  {
    test: 'test_hogql_groupby_unnecessary_ifnull',
    fixture: 'random',
    hogql:
      'select toDate(timestamp) as timestamp, count() as cnt from events where timestamp >= addDays(today(), -10) group by timestamp having cnt > 10 limit 1',
    rows: [],
  },
  {
    test: 'test_hogql_unnecessary_ifnull',
    fixture: 'random',
    hogql:
      "select toDate(timestamp) as timestamp, JSONExtractInt(properties, 'field') as json_int from events where timestamp >= addDays(today(), -10) and json_int = 17 limit 1",
    rows: [],
  },
  {
    test: 'test_hogql_proper_ifnull',
    fixture: 'random',
    hogql:
      "WITH latest_events AS (SELECT distinct_id, argMax(properties.$os_version, timestamp) AS latest_os_version FROM events WHERE properties.$os = 'iOS' AND timestamp >= now() - INTERVAL 30 DAY GROUP BY distinct_id), " +
      "major_versions AS (SELECT distinct_id, latest_os_version, splitByChar('.', ifNull(latest_os_version, ''))[1] AS major_version FROM latest_events) " +
      "SELECT major_version, count() AS user_count, round(100 * count() / sum(count()) OVER (), 2) AS percentage FROM major_versions WHERE major_version IN ('17', '18', '26') GROUP BY major_version ORDER BY major_version",
    rows: [],
  },
  {
    test: 'test_hogql_arrays',
    fixture: 'random',
    hogql: 'SELECT [1, 2, 3], [10,11,12][1]',
    rows: [[[1, 2, 3], 10]],
  },
  {
    test: 'test_tuple_access',
    fixture: 'random',
    hogql:
      'select col_a, arrayZip( (sumMap( g.1, g.2 ) as x).1, x.2) as r from ( select col_a, groupArray( (col_b, col_c) ) as g from ' +
      '( SELECT properties.index as col_a, event as col_b, count() as col_c FROM events GROUP BY properties.index, event ) group by col_a) group by col_a ORDER BY col_a',
    rows: pivot,
  },
  {
    test: 'test_null_properties',
    fixture: 'extra',
    hogql:
      "SELECT properties.empty_string, properties.`null`, properties.undefined, properties.str_zero, properties.num_zero FROM events WHERE events.event='empty event'",
    rows: [['', null, null, '0', '0']],
  },
  {
    test: 'test_window_functions_simple',
    fixture: 'windows',
    hogql:
      'select distinct_id, timestamp, event, ' +
      'groupArray(event) OVER (PARTITION BY distinct_id ORDER BY timestamp ASC ROWS BETWEEN 2 PRECEDING AND 1 PRECEDING) AS two_before, ' +
      'groupArray(event) OVER (PARTITION BY distinct_id ORDER BY timestamp ASC ROWS BETWEEN 1 FOLLOWING AND 2 FOLLOWING) AS two_after ' +
      `from events where timestamp > toDateTime('2020-01-09 00:00:00') and distinct_id like '%_${RANDOM}' order by distinct_id, timestamp`,
    rows: windowRows(false),
  },
  {
    test: 'test_window_functions_with_window',
    fixture: 'windows',
    hogql:
      'select distinct_id, timestamp, event, groupArray(event) OVER w1 AS two_before, groupArray(event) OVER w2 AS two_after, ' +
      'row_number() OVER w1 AS rn_1, row_number() OVER w2 AS rn_2, first_value(event) OVER w1 AS first_value_1, last_value(event) OVER w1 AS last_value_1, ' +
      'first_value(event) OVER w2 AS first_value_2, last_value(event) OVER w2 AS last_value_2, rank() OVER w1 AS rank_1, dense_rank() OVER w2 AS rank_2 ' +
      `from events where timestamp > toDateTime('2020-01-09 00:00:00') and distinct_id like '%_${RANDOM}' ` +
      'window w1 as (PARTITION BY distinct_id ORDER BY timestamp ASC ROWS BETWEEN 2 PRECEDING AND 1 PRECEDING), ' +
      'w2 as (PARTITION BY distinct_id ORDER BY timestamp ASC ROWS BETWEEN 1 FOLLOWING AND 2 FOLLOWING) order by distinct_id, timestamp',
    rows: windowRows(true),
  },
  {
    test: 'test_between_operators (one of)',
    fixture: 'random',
    hogql: 'select 5 between 1 and null, 10 not between 1 and 10',
    rows: [[0, 0]],
  },
  {
    test: 'test_with_pivot_table_1_level',
    fixture: 'random',
    hogql: `${pivotCtes} SELECT * FROM PIVOT_FUNCTION_2 ORDER BY col_a`,
    rows: pivot,
  },
  {
    test: 'test_with_pivot_table_2_levels',
    fixture: 'random',
    hogql: `${pivotCtes}, final as (select * from PIVOT_FUNCTION_2) SELECT * FROM final ORDER BY col_a`,
    rows: pivot,
  },
  {
    test: 'test_property_access_with_arrays',
    fixture: 'extra',
    hogql: `SELECT ${PROPERTY_PATHS.join(',')} FROM events WHERE properties.string = '${RANDOM}'`,
    rows: [PROPERTY_PATHS.map(() => RANDOM)],
  },
  {
    test: 'test_property_access_with_arrays_zero_index_error',
    fixture: 'random',
    hogql: 'SELECT properties.something[0] FROM events',
    fails: /SQL indexes start from one, not from zero/,
  },
  {
    test: 'test_property_access_with_arrays_zero_index_error',
    fixture: 'random',
    hogql: 'SELECT properties.something.0 FROM events',
    fails: /SQL indexes start from one, not from zero/,
  },
  {
    test: 'test_time_window_functions',
    fixture: 'random',
    hogql:
      "SELECT tumble(toDateTime('2020-01-01'), toIntervalDay('1')), tumbleStart(toDateTime('2020-01-01'), toIntervalDay('1')), " +
      "tumbleEnd(toDateTime('2020-01-01'), toIntervalDay('1')), hop(toDateTime('2020-01-01'), toIntervalDay('1'), toIntervalDay('2')), " +
      "hopStart(toDateTime('2020-01-01'), toIntervalDay('1'), toIntervalDay('2')), hopEnd(toDateTime('2020-01-01'), toIntervalDay('1'), toIntervalDay('2'))",
    rows: [
      [
        ['2020-01-01 00:00:00', '2020-01-02 00:00:00'],
        '2020-01-01 00:00:00',
        '2020-01-02 00:00:00',
        ['2019-12-31 00:00:00', '2020-01-02 00:00:00'],
        '2019-12-31 00:00:00',
        '2020-01-02 00:00:00',
      ],
    ],
  },
  {
    test: 'test_regex_functions',
    fixture: 'random',
    hogql:
      "SELECT 'kala' ~ '.*', 'kala' =~ '.*', 'kala' !~ '.*', 'kala' =~ 'a', 'kala' !~ 'a', 'kala' =~ 'A', 'kala' !~ 'A', 'kala' ~* 'A', 'kala' =~* 'A', 'kala' !~* 'A'",
    rows: [[1, 1, 0, 1, 0, 0, 1, 1, 1, 0]],
  },
  {
    test: 'test_nullish_coalescing',
    fixture: 'random',
    hogql:
      "SELECT null ?? 1, null ?? null ?? 2, 3 ?? null, null ?? 'string', 1 + (null ?? 2) + 3, 1 + null ?? 2 + 3, 10 ?? true ? 20 : 30, 10 ?? 5 + 10",
    rows: [[1, 2, 3, 'string', 6, 5, 20, 10]],
  },
  {
    test: 'test_numbers_table',
    fixture: 'random',
    hogql: 'SELECT number from numbers(1, 4)',
    rows: [[1], [2], [3], [4]],
  },
  {
    test: 'test_numbers_table',
    fixture: 'random',
    hogql: 'SELECT * from numbers(1, 4)',
    rows: [[1], [2], [3], [4]],
  },
  {
    test: 'test_numbers_table',
    fixture: 'random',
    hogql: 'SELECT number from numbers(4)',
    rows: [[0], [1], [2], [3]],
  },
  {
    test: 'test_numbers_table',
    fixture: 'random',
    hogql: 'SELECT number from numbers(2 + 2)',
    rows: [[0], [1], [2], [3]],
  },
  {
    test: 'test_numbers_table',
    fixture: 'random',
    hogql: 'SELECT number + number + 1 from numbers(2 + 2)',
    rows: [[1], [3], [5], [7]],
  },
  {
    test: 'test_numbers_table',
    fixture: 'random',
    hogql: 'SELECT number from numbers',
    fails: /Unknown table 'numbers'/,
  },
  {
    test: 'test_numbers_table',
    fixture: 'random',
    hogql: 'SELECT number from numbers()',
    fails: /numbers\(\) takes one or two arguments/,
  },
  {
    test: 'test_numbers_table',
    fixture: 'random',
    hogql: 'SELECT number from numbers(1,2,3)',
    fails: /numbers\(\) takes one or two arguments/,
  },
  {
    test: 'test_numbers_table',
    fixture: 'random',
    hogql: 'SELECT number from numbers(2 + ifNull((select 2), 1000))',
    fails: /numbers\(\) takes constant arguments/,
  },
  {
    test: 'test_numbers_table',
    fixture: 'random',
    hogql:
      "SELECT number from numbers(assumeNotNull(dateDiff('day', toStartOfDay(toDateTime('2011-12-31 00:00:00')), toDateTime('2012-01-14 23:59:59'))))",
    rows: Array.from({ length: 14 }, (_, i) => [i]),
  },
  {
    test: 'test_events_table_error_if_function',
    fixture: 'random',
    hogql: 'SELECT * from events(1, 4)',
    fails: /Table functions are not allowed: events\(\)/,
  },
  {
    test: 'test_hogql_query_filters_empty_true',
    fixture: 'random',
    hogql: 'SELECT event from events where {filters}',
    rows: [['random event'], ['random event']],
  },
  {
    test: 'test_hogql_union_all_limits',
    fixture: 'random',
    hogql: 'SELECT event FROM events UNION ALL SELECT event FROM events',
    count: 4,
  },
  {
    test: 'test_sortable_semver',
    fixture: 'random',
    hogql:
      "SELECT arrayJoin(['0.0.0.0.1000', '0.9', '0.2354.2', '1.0.0', '1.1.0', '1.2.0', '1.9.233434.10', '1.10.0', '1.1000.0', '2.0.0', '2.2.0.betabac', '2.2.1']) AS semver ORDER BY sortableSemVer(semver) DESC",
    rows: [
      ['2.2.1'],
      ['2.2.0.betabac'],
      ['2.0.0'],
      ['1.1000.0'],
      ['1.10.0'],
      ['1.9.233434.10'],
      ['1.2.0'],
      ['1.1.0'],
      ['1.0.0'],
      ['0.2354.2'],
      ['0.9'],
      ['0.0.0.0.1000'],
    ],
  },
  {
    test: 'test_sortable_semver_output',
    fixture: 'random',
    hogql: "SELECT sortableSemVer('1.2.3.4.15bac.16')",
    rows: [[[1, 2, 3, 4, 15]]],
  },
]

// test_printer.py: statements PostHog prints (and runs) or refuses.
export const POSTHOG_PRINTER_CASES: PostHogCase[] = [
  {
    test: 'test_select_from',
    fixture: 'random',
    hogql: 'select 1 from other',
    fails: /Unknown table 'other'/,
  },
  {
    test: 'test_expr_parse_errors',
    fixture: 'random',
    hogql: 'select avg(bla) from events',
    fails: /Unknown field 'bla'/,
  },
  {
    test: 'test_expr_parse_errors',
    fixture: 'random',
    hogql: 'select count(1,2,3,4) from events',
    fails: /'count' takes 0 to 1 argument/,
  },
  {
    test: 'test_expr_parse_errors',
    fixture: 'random',
    hogql: 'select countIf() from events',
    fails: /'countIf' takes 1 to 2/,
  },
  {
    test: 'test_expr_parse_errors',
    fixture: 'random',
    hogql: 'select countIf(2,3,4) from events',
    fails: /'countIf' takes 1 to 2/,
  },
  {
    test: 'test_expr_parse_errors',
    fixture: 'random',
    hogql: 'select hamburger(event) from events',
    fails: /'hamburger' is not available/,
  },
  {
    test: 'test_expr_parse_errors',
    fixture: 'random',
    hogql: 'select mad(event) from events',
    fails: /'mad' is not available/,
  },
  {
    test: 'test_expr_parse_errors',
    fixture: 'random',
    hogql: 'select yeet.the.cloud from events',
    fails: /Unknown field/,
  },
  {
    test: 'test_expr_parse_errors',
    fixture: 'random',
    hogql: 'select chipotle from events',
    fails: /Unknown field 'chipotle'/,
  },
  {
    test: 'test_expr_parse_errors',
    fixture: 'random',
    hogql: 'select avg(avg(properties.bla)) from events',
    fails: /cannot be nested inside the aggregation 'avg'/,
  },
  {
    test: 'test_expr_parse_errors',
    fixture: 'random',
    hogql: 'select person.chipotle from events',
    fails: /Unknown field 'chipotle'/,
  },
  {
    test: 'test_expr_syntax_errors',
    fixture: 'random',
    hogql: 'select ( from events',
    fails: /no viable alternative/,
  },
  { test: 'test_expr_syntax_errors', fixture: 'random', hogql: 'select 1;2', fails: /./ },
  {
    test: 'test_alias_keywords',
    fixture: 'random',
    hogql: 'select 1 as team_id from events',
    fails: /reserved keyword/,
  },
  {
    test: 'test_alias_keywords',
    fixture: 'random',
    hogql: 'select 1 as true from events',
    fails: /reserved keyword/,
  },
  {
    test: 'test_alias_keywords',
    fixture: 'random',
    hogql: 'select 1 as `-- select team_id` from events',
    rows: [[1], [1]],
  },
  { test: 'test_hogql_properties', fixture: 'random', hogql: 'select properties.0 from events', fails: /./ },
  { test: 'test_equals_null', fixture: 'random', hogql: 'select 1 == null, 1 != null', rows: [[0, 1]] },
  {
    test: 'test_select_limit_by',
    fixture: 'random',
    hogql: 'select event from events limit 10 offset 0 by 1,event',
    rows: [['random event'], ['random event']],
  },
  {
    test: 'test_select_union_all',
    fixture: 'random',
    hogql: 'SELECT 1 UNION ALL (SELECT 1 UNION ALL SELECT 1) UNION ALL SELECT 1',
    rows: [[1], [1], [1], [1]],
  },
  {
    test: 'test_select_union_all',
    fixture: 'random',
    hogql: 'SELECT 1 FROM (SELECT 1 UNION ALL SELECT 1)',
    rows: [[1], [1]],
  },
  {
    test: 'test_count_if_distinct',
    fixture: 'random',
    hogql: "SELECT countIf(distinct event, event like '%a%') FROM events",
    rows: [[1]],
  },
  { test: 'test_values', fixture: 'random', hogql: "select coalesce(4.2, 5, 'lol', 'hoo')", rows: [[4.2]] },
  {
    test: 'test_union_distinct',
    fixture: 'random',
    hogql: 'select 1 as id union distinct select 2 as id',
    rows: [[1], [2]],
    unordered: true,
  },
  {
    test: 'test_intersect',
    fixture: 'random',
    hogql: 'select 1 as id intersect select 2 as id',
    rows: [],
  },
  {
    test: 'test_intersect_distinct',
    fixture: 'random',
    hogql: 'select 1 as id intersect distinct select 2 as id',
    rows: [],
  },
  {
    test: 'test_except',
    fixture: 'random',
    hogql: 'select 1 as id except select 2 as id',
    rows: [[1]],
  },
  {
    test: 'test_except_and_union',
    fixture: 'random',
    hogql: 'select 1 as id except select 2 as id union all select 3 as id',
    rows: [[1], [3]],
    unordered: true,
  },
  {
    test: 'test_union_and_except',
    fixture: 'random',
    hogql: 'select 1 as id union all select 2 as id except select 3 as id',
    rows: [[1], [2]],
    unordered: true,
  },
  {
    test: 'test_intersect3',
    fixture: 'random',
    hogql: 'select 1 as id intersect select 2 as id intersect select 3 as id',
    rows: [],
  },
  {
    test: 'test_union3',
    fixture: 'random',
    hogql: 'select 1 as id union all select 2 as id union all select 3 as id',
    rows: [[1], [2], [3]],
    unordered: true,
  },
  {
    test: 'test_intersect_and_union_parens',
    fixture: 'random',
    hogql: 'select 1 as id intersect (select 2 as id union all select 3 as id)',
    rows: [],
  },
  {
    test: 'test_intersect_and_union',
    fixture: 'random',
    hogql: 'select 1 as id union all select 2 as id intersect select 3 as id',
    rows: [[1]],
  },
  {
    test: 'test_array_access',
    fixture: 'random',
    hogql: 'select [1,2,3][1]',
    rows: [[1]],
  },
  {
    test: 'test_array_access',
    fixture: 'random',
    hogql: 'select [1,2,3]?.[1], (1,2)?.2',
    rows: [[1, 2]],
  },
  {
    test: 'test_tuples',
    fixture: 'random',
    hogql: 'select (1,2), (1,2,[])',
    rows: [
      [
        [1, 2],
        [1, 2, []],
      ],
    ],
  },
  {
    test: 'test_lambdas',
    fixture: 'random',
    hogql: 'select arrayMap(x -> x*2, [1,2,3])',
    rows: [[[2, 4, 6]]],
  },
  {
    test: 'test_equals_null',
    fixture: 'random',
    hogql: 'select event == null, event != null from events',
    rows: [
      [0, 1],
      [0, 1],
    ],
  },
  {
    test: 'test_fields_and_properties',
    fixture: 'random',
    hogql: "select properties['bla']['bla'], properties.nomat.json.yet from events",
    rows: [
      [null, null],
      [null, null],
    ],
  },
  {
    test: 'test_methods',
    fixture: 'random',
    hogql:
      'select count(), count(distinct event), countIf(distinct event, 1 == 2), sumIf(1, 1 == 2) from events',
    rows: [[2, 1, 0, 0]],
  },
  {
    test: 'test_functions',
    fixture: 'random',
    hogql: "select abs(1), toInt('1'), toFloat('1.3'), toUUID('470f9b15-ff43-402a-af9f-2ed7c526a6cf')",
    rows: [[1, 1, 1.3, '470f9b15-ff43-402a-af9f-2ed7c526a6cf']],
  },
  {
    test: 'test_functions',
    fixture: 'random',
    hogql: 'select max2(1,2)',
    rows: [[2]],
  },
  {
    test: 'test_expr_parse_errors',
    fixture: 'random',
    hogql: 'select uniq() from events',
    fails: /'uniq' takes at least 1/,
  },
  {
    test: 'test_expr_parse_errors',
    fixture: 'random',
    hogql: 'select quantile(event) from events',
    fails: /'quantile' needs 1 parameter/,
  },
  {
    test: 'test_expr_parse_errors',
    fixture: 'random',
    hogql: 'select quantile()(event) from events',
    fails: /'quantile' needs 1 parameter/,
  },
  {
    test: 'test_expr_parse_errors',
    fixture: 'random',
    hogql: 'select quantile(0.5, 2)(event) from events',
    fails: /'quantile' takes at most 1 parameter/,
  },
  {
    test: 'test_expr_parse_errors',
    fixture: 'random',
    hogql: 'select sparkline() from events',
    fails: /'sparkline' takes 1 argument/,
  },
  {
    test: 'test_expr_parse_errors',
    fixture: 'random',
    hogql: 'select noway(event) from events',
    fails: /'noway' is not available/,
  },
  {
    test: 'test_expr_parse_errors',
    fixture: 'random',
    hogql: 'select tostring(event) from events',
    fails: /'tostring' is not available/,
  },
  {
    test: 'test_expr_parse_errors',
    fixture: 'random',
    hogql: 'select properties.id.0 from events',
    fails: /SQL indexes start from one/,
  },
  {
    test: 'test_expr_parse_errors',
    fixture: 'random',
    hogql: 'select person from events',
    fails: /'person' is a table/,
  },
  {
    test: 'test_expr_syntax_errors',
    fixture: 'random',
    hogql: 'select (3 57',
    fails: /no viable alternative/,
  },
  {
    test: 'test_expr_syntax_errors',
    fixture: 'random',
    hogql: 'select b.a(bla) from events',
    fails: /./,
  },
  {
    test: 'test_comparisons',
    fixture: 'random',
    hogql:
      "select event ~ 'E', event =~ 'r', event !~ 'E', event ~* 'R', event =~* 'r', event !~* 'E', event in 'other', event not in 'other' from events",
    rows: [
      [0, 1, 1, 1, 1, 0, 0, 1],
      [0, 1, 1, 1, 1, 0, 0, 1],
    ],
  },
  {
    test: 'test_case_when',
    fixture: 'random',
    hogql:
      'select case when 1 then 2 else 3 end, case when 1 then 2 when 3 then 4 else 5 end, case 0 when 1 then 2 when 3 then 4 else 5 end',
    rows: [[2, 2, 5]],
  },
  {
    test: 'test_select',
    fixture: 'random',
    hogql: 'select 1 + 2, 3',
    rows: [[3, 3]],
  },
  {
    test: 'test_select',
    fixture: 'random',
    hogql: 'select 1 + 2, 3 + 4 from events',
    rows: [
      [3, 7],
      [3, 7],
    ],
  },
  {
    test: 'test_select_alias',
    fixture: 'random',
    hogql: 'select 1 as b',
    rows: [[1]],
  },
  {
    test: 'test_select_alias',
    fixture: 'random',
    hogql: 'select 1 from events as e',
    rows: [[1], [1]],
  },
  {
    test: 'test_select_array_join',
    fixture: 'random',
    hogql: 'select 1, a from events array join [1,2,3] as a',
    rows: [
      [1, 1],
      [1, 2],
      [1, 3],
      [1, 1],
      [1, 2],
      [1, 3],
    ],
    unordered: true,
  },
  {
    test: 'test_select_array_join',
    fixture: 'random',
    hogql: 'select 1, a, [1,2,3] as nums from events array join nums as a',
    rows: [
      [1, 1, [1, 2, 3]],
      [1, 2, [1, 2, 3]],
      [1, 3, [1, 2, 3]],
      [1, 1, [1, 2, 3]],
      [1, 2, [1, 2, 3]],
      [1, 3, [1, 2, 3]],
    ],
    unordered: true,
  },
  {
    test: 'test_select_array_join',
    fixture: 'random',
    hogql: 'select 1, a from events left array join [1,2,3] as a',
    rows: [
      [1, 1],
      [1, 2],
      [1, 3],
      [1, 1],
      [1, 2],
      [1, 3],
    ],
    unordered: true,
  },
  {
    test: 'test_select_array_join',
    fixture: 'random',
    hogql: 'select 1, a from events inner array join [1,2,3] as a',
    rows: [
      [1, 1],
      [1, 2],
      [1, 3],
      [1, 1],
      [1, 2],
      [1, 3],
    ],
    unordered: true,
  },
  {
    test: 'test_select_where',
    fixture: 'random',
    hogql: 'select 1 from events where 1 == 2',
    rows: [],
  },
  {
    test: 'test_select_having',
    fixture: 'random',
    hogql: 'select 1 from events having 1 == 2',
    rows: [],
  },
  {
    test: 'test_select_prewhere',
    fixture: 'random',
    hogql: 'select 1 from events prewhere 1 == 2',
    rows: [],
  },
  {
    test: 'test_select_prewhere',
    fixture: 'random',
    hogql: 'select 1 from events prewhere 1 == 2 where 2 == 3',
    rows: [],
  },
  {
    test: 'test_select_order_by',
    fixture: 'random',
    hogql: 'select event from events order by event desc, timestamp',
    rows: [['random event'], ['random event']],
  },
  {
    test: 'test_select_limit',
    fixture: 'random',
    hogql: 'select event from events limit 10',
    rows: [['random event'], ['random event']],
  },
  {
    test: 'test_select_limit',
    fixture: 'random',
    hogql: 'select event from events limit 1000000',
    rows: [['random event'], ['random event']],
  },
  {
    test: 'test_select_limit',
    fixture: 'random',
    hogql: 'select event from events limit (select 100000000)',
    rows: [['random event'], ['random event']],
  },
  {
    // PostHog prints it without ORDER BY, which ClickHouse refuses for WITH TIES: ordered here
    test: 'test_select_limit',
    fixture: 'random',
    hogql: 'select event from events order by event limit (select 1) with ties',
    rows: [['random event'], ['random event']],
  },
  {
    test: 'test_select_offset',
    fixture: 'random',
    hogql: 'select event from events offset 10',
    rows: [],
  },
  {
    test: 'test_select_offset',
    fixture: 'random',
    hogql: 'select event from events limit 10 offset 10',
    rows: [],
  },
  {
    test: 'test_select_offset',
    fixture: 'random',
    hogql: 'select event from events limit 10 offset 0',
    rows: [['random event'], ['random event']],
  },
  {
    test: 'test_select_group_by',
    fixture: 'random',
    hogql: 'select event from events group by event, timestamp',
    rows: [['random event']],
  },
  {
    test: 'test_select_distinct',
    fixture: 'random',
    hogql: 'select distinct event from events group by event, timestamp',
    rows: [['random event']],
  },
  {
    test: 'test_select_subquery',
    fixture: 'random',
    hogql: 'SELECT event from (select distinct event from events group by event, timestamp)',
    rows: [['random event']],
  },
  {
    test: 'test_select_subquery',
    fixture: 'random',
    hogql: 'SELECT event from (select distinct event from events group by event, timestamp) e',
    rows: [['random event']],
  },
  {
    test: 'test_select_union_all',
    fixture: 'random',
    hogql: 'SELECT events.event FROM events UNION ALL SELECT events.event FROM events WHERE 1 = 2',
    rows: [['random event'], ['random event']],
  },
  {
    test: 'test_select_sample',
    fixture: 'random',
    hogql: 'SELECT events.event FROM events SAMPLE 1',
    rows: [['random event'], ['random event']],
  },
  {
    test: 'test_select_sample',
    fixture: 'random',
    hogql: 'SELECT events.event FROM events SAMPLE 0.1 OFFSET 1/10',
    rows: [],
  },
  {
    test: 'test_select_sample',
    fixture: 'random',
    hogql: 'SELECT events.event FROM events SAMPLE 1/10 OFFSET 4/10',
    rows: [['random event'], ['random event']],
  },
  {
    test: 'test_select_sample',
    fixture: 'random',
    hogql: 'SELECT events.event FROM events SAMPLE 1/2',
    rows: [['random event'], ['random event']],
  },
  {
    test: 'test_select_sample',
    fixture: 'random',
    hogql:
      'SELECT events.event FROM events SAMPLE 2/78 JOIN persons SAMPLE 0.1 ON persons.id=events.person_id',
    fails: /SAMPLE needs a table with a sampling key/,
  },
  {
    test: 'test_count_distinct',
    fixture: 'random',
    hogql: 'SELECT count(distinct event) as count FROM events',
    rows: [[1]],
  },
  {
    test: 'test_count_star',
    fixture: 'random',
    hogql: 'SELECT count(*) as count FROM events',
    rows: [[2]],
  },
  {
    test: 'test_postgres_compatible_lag_and_lead_functions',
    fixture: 'windows',
    hogql: 'SELECT distinct_id, lag(event) OVER (PARTITION BY distinct_id ORDER BY timestamp) FROM events',
    rows: [
      [`person_0_${RANDOM}`, null],
      [`person_0_${RANDOM}`, 'random event'],
      [`person_0_${RANDOM}`, 'random bla'],
      [`person_1_${RANDOM}`, null],
      [`person_1_${RANDOM}`, 'random event'],
      [`person_1_${RANDOM}`, 'random bla'],
      [`person_2_${RANDOM}`, null],
      [`person_2_${RANDOM}`, 'random event'],
      [`person_2_${RANDOM}`, 'random bla'],
      [`person_3_${RANDOM}`, null],
      [`person_3_${RANDOM}`, 'random event'],
      [`person_3_${RANDOM}`, 'random bla'],
      [`person_4_${RANDOM}`, null],
      [`person_4_${RANDOM}`, 'random event'],
      [`person_4_${RANDOM}`, 'random bla'],
    ],
    unordered: true,
  },
  {
    test: 'test_postgres_compatible_lag_and_lead_functions',
    fixture: 'windows',
    hogql: 'SELECT distinct_id, lead(event) OVER (PARTITION BY distinct_id ORDER BY timestamp) FROM events',
    rows: [
      [`person_0_${RANDOM}`, 'random bla'],
      [`person_0_${RANDOM}`, 'random boo'],
      [`person_0_${RANDOM}`, null],
      [`person_1_${RANDOM}`, 'random bla'],
      [`person_1_${RANDOM}`, 'random boo'],
      [`person_1_${RANDOM}`, null],
      [`person_2_${RANDOM}`, 'random bla'],
      [`person_2_${RANDOM}`, 'random boo'],
      [`person_2_${RANDOM}`, null],
      [`person_3_${RANDOM}`, 'random bla'],
      [`person_3_${RANDOM}`, 'random boo'],
      [`person_3_${RANDOM}`, null],
      [`person_4_${RANDOM}`, 'random bla'],
      [`person_4_${RANDOM}`, 'random boo'],
      [`person_4_${RANDOM}`, null],
    ],
    unordered: true,
  },
  {
    test: 'test_postgres_compatible_lag_and_lead_functions',
    fixture: 'windows',
    hogql:
      'SELECT distinct_id, lag(event) over win1 as prev, min(event) over win1 as m FROM events WINDOW win1 as (PARTITION by distinct_id ORDER BY timestamp)',
    count: 15,
  },
  {
    test: 'test_nullish_concat',
    fixture: 'random',
    hogql: "select concat(null, 'a', 3, toString(4), toString(NULL))",
    rows: [['a34']],
  },
  {
    test: 'test_to_start_of_week_gets_mode',
    fixture: 'random',
    hogql: 'select toStartOfWeek(timestamp) from events',
    rows: [['2020-01-05'], ['2020-01-05']],
  },
  {
    test: 'test_functions_expecting_datetime_arg',
    fixture: 'random',
    hogql: "select tumble(toDateTime('2023-06-12'), toIntervalDay('1')) as t",
    rows: [[['2023-06-12 00:00:00', '2023-06-13 00:00:00']]],
  },
  {
    test: 'test_override_timezone',
    fixture: 'random',
    hogql:
      "SELECT toDateTime(timestamp) as ts, toDateTime(timestamp, 'US/Pacific') as tsz, now() as now, now('US/Pacific') as nowz FROM events",
    first: { 0: '2020-01-10 00:00:00', 1: '2020-01-09 16:00:00' },
  },
  {
    test: 'test_trim_leading_trailing_both',
    fixture: 'random',
    hogql:
      "select trim(LEADING 'xy' FROM 'media') as a, trim(TRAILING 'xy' FROM 'media') as b, trim(BOTH 'xy' FROM 'media') as c",
    rows: [['media', 'media', 'media']],
  },
  {
    test: 'test_trim_leading_trailing_both',
    fixture: 'random',
    hogql: "select trimLeft('media', 'xy') as a, trimRight('media', 'xy') as b, trim('media', 'xy') as c",
    rows: [['media', 'media', 'media']],
  },
  {
    test: 'test_case_insensitive_functions',
    fixture: 'random',
    hogql: 'select CoALESce(1), SuM(1)',
    rows: [[1, 1]],
  },
  {
    test: 'test_print_percentage_call_alias',
    fixture: 'random',
    hogql: "SELECT concat('%', 'word', '%') LIMIT 1",
    rows: [['%word%']],
  },
  {
    test: 'test_print_clickhouse_output_format_union',
    fixture: 'random',
    hogql: 'select 1 limit 1 union all select 2 limit 1',
    rows: [[1], [2]],
    unordered: true,
  },
  {
    test: 'test_print_clickhouse_output_format_union_with_nested_union_subquery',
    fixture: 'random',
    hogql: 'select * from (select 1 as num union all select 2 as num) limit 2',
    rows: [[1], [2]],
    unordered: true,
  },
  {
    test: 'TestPrinted.test_can_call_parametric_function',
    fixture: 'random',
    hogql: "SELECT arrayReduce('sum', [1, 2, 3])",
    rows: [[6]],
  },
  {
    test: 'test_fails_on_parametric_function',
    fixture: 'random',
    hogql: 'SELECT arrayReduce()',
    fails: /arrayReduce's first argument must name an allowed aggregate/,
  },
  {
    test: 'test_fails_on_parametric_function',
    fixture: 'random',
    hogql: 'SELECT arrayReduce(1, [1, 2, 3])',
    fails: /arrayReduce's first argument must name an allowed aggregate/,
  },
  {
    test: 'test_fails_on_parametric_function',
    fixture: 'random',
    hogql: 'SELECT arrayReduce(x -> x, [1, 2, 3])',
    fails: /arrayReduce's first argument must name an allowed aggregate/,
  },
  {
    test: 'test_fails_on_parametric_function',
    fixture: 'random',
    hogql: "SELECT arrayReduce('ev' + 'il', [1, 2, 3])",
    fails: /arrayReduce's first argument must name an allowed aggregate/,
  },
  {
    test: 'test_fails_on_parametric_function',
    fixture: 'random',
    hogql: "SELECT arrayReduce('evil', [1, 2, 3])",
    fails: /arrayReduce's first argument must name an allowed aggregate/,
  },
  {
    test: 'test_fails_on_parametric_function',
    fixture: 'random',
    hogql: "SELECT arrayReduce('array_agg', [1, 2, 3])",
    fails: /arrayReduce's first argument must name an allowed aggregate/,
  },
  {
    test: 'test_s3_tables_global_join_with_multiple_joins (events only)',
    fixture: 'random',
    hogql: 'select e.event, s.event from events e JOIN (SELECT event from events) as s ON e.event = s.event',
    rows: [
      ['random event', 'random event'],
      ['random event', 'random event'],
      ['random event', 'random event'],
      ['random event', 'random event'],
    ],
  },
]

// test_resolver.py: statements PostHog resolves (its tests compare the resolved or printed form; the
// answers here are what that printed SQL returns on the 'random' fixture) or refuses.
export const POSTHOG_RESOLVER_CASES: PostHogCase[] = [
  {
    test: 'test_resolve_events_table',
    fixture: 'random',
    hogql: "SELECT event, events.timestamp FROM events WHERE events.event = 'test'",
    count: 0,
  },
  {
    test: 'test_resolve_events_table_alias',
    fixture: 'random',
    hogql: "SELECT event, e.timestamp FROM events e WHERE e.event = 'test'",
    count: 0,
  },
  {
    test: 'test_resolve_events_table_column_alias',
    fixture: 'random',
    hogql: "SELECT event as ee, ee, ee as e, e.timestamp FROM events e WHERE e.event = 'test'",
    count: 0,
  },
  {
    test: 'test_resolve_events_table_column_alias_inside_subquery',
    fixture: 'random',
    hogql: "SELECT b FROM (select event as b, timestamp as c from events) e WHERE e.b = 'test'",
    count: 0,
  },
  {
    test: 'test_resolve_subquery_no_field_access',
    fixture: 'random',
    hogql:
      "SELECT event, (select count() from events where event = e.event) as c FROM events e where event = '$pageview'",
    fails: /Unknown field 'e\.event'/,
  },
  {
    test: 'test_resolve_constant_type',
    fixture: 'random',
    hogql: "SELECT 1, 'boo', true, 1.1232, null",
    rows: [[1, 'boo', 1, 1.1232, null]],
  },
  {
    test: 'test_resolve_boolean_operation_types',
    fixture: 'random',
    hogql: 'SELECT 1 and 1, 1 or 1, not true',
    rows: [[1, 1, 0]],
  },
  {
    test: 'test_resolve_errors',
    fixture: 'random',
    hogql:
      "SELECT event, (select count() from events where event = x.event) as c FROM events x where event = '$pageview'",
    fails: /Unknown field/,
  },
  {
    test: 'test_resolve_errors',
    fixture: 'random',
    hogql: 'SELECT x, (SELECT 1 AS x)',
    fails: /Unknown field/,
  },
  {
    test: 'test_resolve_errors',
    fixture: 'random',
    hogql: 'SELECT x IN (SELECT 1 AS x)',
    fails: /Unknown field/,
  },
  {
    test: 'test_resolve_errors',
    fixture: 'random',
    hogql: 'SELECT events.x FROM (SELECT event as x FROM events) AS t',
    fails: /Unknown field/,
  },
  {
    test: 'test_resolve_errors',
    fixture: 'random',
    hogql: 'SELECT x.y FROM (SELECT event as y FROM events AS x) AS t',
    fails: /Unknown field/,
  },
  {
    test: 'test_unresolved_field_type',
    fixture: 'random',
    hogql: 'SELECT x',
    fails: /Unknown field 'x'/,
  },
  {
    test: 'test_resolve_lazy_pdi_person_table',
    fixture: 'random',
    hogql: 'select distinct_id, person.id from person_distinct_ids',
    rows: [['bla', PERSON]],
  },
  {
    test: 'test_resolve_lazy_events_pdi_table',
    fixture: 'random',
    hogql: 'select event, pdi.person_id from events',
    rows: [
      ['random event', PERSON],
      ['random event', PERSON],
    ],
  },
  {
    test: 'test_resolve_lazy_events_pdi_table_aliased',
    fixture: 'random',
    hogql: 'select event, e.pdi.person_id from events e',
    rows: [
      ['random event', PERSON],
      ['random event', PERSON],
    ],
  },
  {
    test: 'test_resolve_lazy_events_pdi_person_table',
    fixture: 'random',
    hogql: 'select event, pdi.person.id from events',
    rows: [
      ['random event', PERSON],
      ['random event', PERSON],
    ],
  },
  {
    test: 'test_resolve_lazy_events_pdi_person_table_aliased',
    fixture: 'random',
    hogql: 'select event, e.pdi.person.id from events e',
    rows: [
      ['random event', PERSON],
      ['random event', PERSON],
    ],
  },
  {
    test: 'test_resolve_virtual_events_poe',
    fixture: 'random',
    hogql: 'select event, poe.id from events',
    rows: [
      ['random event', PERSON],
      ['random event', PERSON],
    ],
  },
  {
    test: 'test_resolve_union_all',
    fixture: 'random',
    hogql: 'select event, timestamp from events union all select event, timestamp from events',
    count: 4,
  },
  {
    test: 'test_call_type',
    fixture: 'random',
    hogql: 'select max(timestamp) from events',
    count: 1,
  },
  {
    test: 'test_ctes_loop',
    fixture: 'random',
    hogql: 'with cte as (select * from cte) select * from cte',
    fails: /Unknown table 'cte'/,
  },
  {
    test: 'test_ctes_basic_column',
    fixture: 'random',
    hogql: 'with 1 as cte select cte from events',
    rows: [[1], [1]],
  },
  {
    test: 'test_ctes_recursive_column',
    fixture: 'random',
    hogql: 'with 1 as cte, cte as soap select soap from events',
    rows: [[1], [1]],
  },
  {
    test: 'test_ctes_field_access',
    fixture: 'random',
    hogql: 'with properties as cte select cte.$browser from events',
    fails: /Unknown field/,
  },
  {
    test: 'test_ctes_subqueries',
    fixture: 'random',
    hogql: 'with my_table as (select * from events) select * from my_table',
    count: 2,
  },
  {
    test: 'test_ctes_subqueries',
    fixture: 'random',
    hogql: 'with my_table as (select * from events) select my_table.timestamp from my_table',
    count: 2,
  },
  {
    test: 'test_ctes_subqueries',
    fixture: 'random',
    hogql: 'with my_table as (select * from events) select timestamp from my_table',
    count: 2,
  },
  {
    test: 'test_ctes_subquery_deep',
    fixture: 'random',
    hogql:
      'with my_table as (select * from events), other_table as (select * from (select * from (select * from my_table))) select * from other_table',
    count: 2,
  },
  {
    test: 'test_ctes_subquery_recursion',
    fixture: 'random',
    hogql:
      'with users as (select event, timestamp as tt from events ), final as ( select tt from users ) select * from final',
    count: 2,
  },
  {
    test: 'test_ctes_with_aliases',
    fixture: 'random',
    hogql:
      'WITH initial_alias AS (SELECT 1 AS a) SELECT a FROM initial_alias AS new_alias WHERE new_alias.a=1',
    rows: [[1]],
  },
  {
    test: 'test_ctes_with_union_all',
    fixture: 'random',
    hogql:
      'WITH cte1 AS (SELECT 1 AS a) SELECT 1 AS a UNION ALL WITH cte2 AS (SELECT 2 AS a) SELECT * FROM cte2 UNION ALL SELECT * FROM cte1',
    rows: [[1], [2], [1]],
    unordered: true,
  },
  {
    test: 'test_join_using',
    fixture: 'random',
    hogql:
      'WITH my_table AS (SELECT 1 AS a) SELECT q1.a FROM my_table AS q1 INNER JOIN my_table AS q2 USING a',
    rows: [[1]],
  },
  {
    test: 'test_join_using',
    fixture: 'random',
    hogql: 'SELECT q1.event FROM events AS q1 INNER JOIN events AS q2 USING event',
    rows: [['random event'], ['random event'], ['random event'], ['random event']],
  },
  {
    test: 'test_asterisk_expander_table',
    fixture: 'random',
    hogql: 'select * from events',
    count: 2,
  },
  {
    test: 'test_asterisk_expander_table_alias',
    fixture: 'random',
    hogql: 'select * from events e',
    count: 2,
  },
  {
    test: 'test_asterisk_expander_subquery',
    fixture: 'random',
    hogql: 'select * from (select 1 as a, 2 as b)',
    rows: [[1, 2]],
  },
  {
    test: 'test_asterisk_expander_subquery_alias',
    fixture: 'random',
    hogql: 'select x.* from (select 1 as a, 2 as b) x',
    rows: [[1, 2]],
  },
  {
    test: 'test_asterisk_expander_from_subquery_table',
    fixture: 'random',
    hogql: 'select * from (select * from events)',
    count: 2,
  },
  {
    test: 'test_asterisk_expander_multiple_table_error',
    fixture: 'random',
    hogql: 'select * from (select 1 as a, 2 as b) x left join (select 1 as a, 2 as b) y on x.a = y.a',
    fails: /SELECT \* is not supported with more than one table/,
  },
  {
    test: 'test_asterisk_expander_multiple_table_with_scope',
    fixture: 'random',
    hogql: 'select x.* from (select 1 as a, 2 as b) x left join (select 1 as a, 2 as b) y on x.a = y.a',
    rows: [[1, 2]],
  },
  {
    test: 'test_asterisk_expander_select_union',
    fixture: 'random',
    hogql: 'select * from (select * from events union all select * from events)',
    count: 4,
  },
  {
    // test_printer.py: PostHog prints one `timestamp` column for the subquery's repeated name
    test: 'test_print_hidden_aliases_timestamp',
    fixture: 'random',
    hogql: 'select * from (SELECT timestamp, timestamp FROM events)',
    rows: [[TS], [TS]],
  },
  {
    test: 'test_lambda_parent_scope',
    fixture: 'random',
    hogql: 'select timestamp, arrayMap(x -> x + timestamp, [2]) from events',
    count: 2,
  },
  {
    test: 'test_sparkline_tag',
    fixture: 'random',
    hogql: 'select sparkline((1,2,3))',
    rows: [[['__hx_tag', 'Sparkline', 'data', [1, 2, 3]]]],
  },
  {
    test: 'test_types_pass_outside_subqueries_two_levels',
    fixture: 'random',
    hogql: 'select event from (select event from events)',
    rows: [['random event'], ['random event']],
  },
  {
    test: 'test_types_pass_outside_subqueries_three_levels',
    fixture: 'random',
    hogql: 'select event from (select event from (select event from events))',
    rows: [['random event'], ['random event']],
  },
  {
    test: 'test_arithmetic_types',
    fixture: 'random',
    hogql: 'select 1 + 2 as key from events',
    rows: [[3], [3]],
  },
  {
    test: 'test_arithmetic_types',
    fixture: 'random',
    hogql: 'select key from (select 1 + 2 as key from events)',
    rows: [[3], [3]],
  },
  {
    test: 'test_arithmetic_types',
    fixture: 'random',
    hogql: 'select 1.0 + 2.0 as key from events',
    rows: [[3], [3]],
  },
  {
    test: 'test_arithmetic_types',
    fixture: 'random',
    hogql: 'select 100 + 2.0 as key from events',
    rows: [[102], [102]],
  },
  {
    test: 'test_arithmetic_types',
    fixture: 'random',
    hogql: 'select 1.0 + 200 as key from events',
    rows: [[201], [201]],
  },
  {
    test: 'test_boolean_types',
    fixture: 'random',
    hogql: 'select true and false as key from events',
    rows: [[0], [0]],
  },
  {
    test: 'test_boolean_types',
    fixture: 'random',
    hogql: 'select key from (select true or false as key from events)',
    rows: [[1], [1]],
  },
  {
    test: 'test_compare_types',
    fixture: 'random',
    hogql: 'select 1 < 2 from events',
    rows: [[1], [1]],
  },
  {
    test: 'test_compare_types',
    fixture: 'random',
    hogql: 'select key from (select 3 = 4 as key from events)',
    rows: [[0], [0]],
  },
  {
    test: 'test_compare_types',
    fixture: 'random',
    hogql: 'select key from (select 3 = null as key from events)',
    rows: [[0], [0]],
  },
  {
    test: 'test_function_types',
    fixture: 'random',
    hogql: 'select abs(3) from events',
    rows: [[3], [3]],
  },
  {
    test: 'test_function_types',
    fixture: 'random',
    hogql: 'select plus(1, 2) from events',
    rows: [[3], [3]],
  },
  {
    test: 'test_assume_not_null_type',
    fixture: 'random',
    hogql: "SELECT assumeNotNull(toDateTime('2020-01-01 00:00:00'))",
    rows: [['2020-01-01 00:00:00']],
  },
  {
    test: 'test_interval_type_arithmetic',
    fixture: 'random',
    hogql:
      'SELECT timestamp + toIntervalSecond(1), timestamp - toIntervalSecond(1), timestamp + toIntervalMinute(1), timestamp - toIntervalMinute(1), timestamp + toIntervalHour(1), timestamp - toIntervalHour(1), timestamp + toIntervalDay(1), timestamp - toIntervalDay(1), timestamp + toIntervalWeek(1), timestamp - toIntervalWeek(1), timestamp + toIntervalMonth(1), timestamp - toIntervalMonth(1), timestamp + toIntervalQuarter(1), timestamp - toIntervalQuarter(1), timestamp + toIntervalYear(1), timestamp - toIntervalYear(1) FROM events',
    count: 2,
  },
  {
    test: 'test_globals',
    fixture: 'random',
    hogql: 'select globalVar from events',
    fails: /Unknown field 'globalVar'/,
  },
]

// database/schema/test: test_events.py, test_persons.py (persons deduplicated by version, deleted
// ones left out) and test_groups.py (one row per group, the newest), with their fixtures' rows.
export const POSTHOG_SCHEMA_CASES: PostHogCase[] = [
  // test_persons.py TestPersons: the person's $initial_referring_domain is https://google.com, the
  // event was stamped with https://facebook.com and utm_medium cpc
  {
    test: 'test_persons.test_virtual_person_properties',
    fixture: 'virt',
    hogql: 'select $virt_initial_channel_type from persons where id = {person_id}',
    values: { person_id: VIRT_PERSON },
    rows: [['Organic Search']],
  },
  {
    test: 'test_persons.test_virtual_event_person_properties',
    fixture: 'virt',
    hogql: 'select person.$virt_initial_channel_type from events where person.id = {person_id}',
    values: { person_id: VIRT_PERSON },
    rows: [['Organic Search']],
  },
  {
    test: 'test_persons.test_virtual_event_poe_properties',
    fixture: 'virt',
    hogql: 'select events.poe.$virt_initial_channel_type from events where person.id = {person_id}',
    values: { person_id: VIRT_PERSON },
    rows: [['Paid Social']],
  },
  {
    test: 'test_persons.test_virtual_event_pdi_properties',
    fixture: 'virt',
    hogql: 'select events.pdi.person.$virt_initial_channel_type from events where person.id = {person_id}',
    values: { person_id: VIRT_PERSON },
    rows: [['Organic Search']],
  },
  {
    test: 'test_events.test_select_star_from_events',
    fixture: 'persons',
    hogql: 'select * from events',
    count: 3,
  },
  {
    test: 'test_persons.test_simple_filter',
    fixture: 'persons',
    hogql: "select id, properties from persons where properties.$some_prop = 'something'",
    count: 2,
  },
  {
    test: 'test_persons.test_joins_are_left_alone_for_now',
    fixture: 'persons',
    hogql: "select uuid from events where person.properties.$some_prop = 'something'",
    count: 2,
  },
  {
    test: 'test_persons.test_order_by_limit_transferred',
    fixture: 'persons',
    hogql:
      "select id, properties from persons where properties.$some_prop = 'something' ORDER BY created_at DESC LIMIT 2",
    count: 2,
  },
  {
    test: 'test_persons.test_v2_order_by_and_limit_pushed_down',
    fixture: 'persons',
    hogql: 'SELECT id, properties.$some_prop FROM persons ORDER BY created_at DESC LIMIT 2',
    count: 2,
  },
  {
    test: 'test_persons.test_totals_over_persons_are_not_capped_by_limit',
    fixture: 'persons',
    hogql: 'SELECT count() FROM persons LIMIT 1',
    rows: [[3]],
  },
  {
    test: 'test_persons.test_totals_over_persons_are_not_capped_by_limit',
    fixture: 'persons',
    hogql: 'SELECT id, count() OVER () AS total FROM persons LIMIT 1',
    first: { 1: 3 },
  },
  {
    test: 'test_persons.test_nullable_property_keeps_wrap_and_latest_null_wins',
    fixture: 'unset',
    hogql: 'SELECT properties.jsonprop, properties.untouched FROM persons WHERE id = {pid}',
    values: { pid: UNSET },
    rows: [[null, 'keep']],
  },
  {
    test: 'test_persons.test_non_nullable_columns_are_simplified',
    fixture: 'unset',
    hogql: 'SELECT id, created_at FROM persons WHERE id = {pid}',
    values: { pid: UNSET },
    first: { 0: UNSET },
  },
  {
    test: 'test_groups.test_bare_limit_two_phase_returns_correct_deduplicated_rows',
    fixture: 'groups',
    hogql: 'SELECT key, properties.name FROM groups LIMIT 10',
    rows: [['g00', 'LATEST'], ...[1, 2, 3, 4, 5, 6, 7, 8, 9].map((i) => [`g0${i}`, `name-${i}`])],
    unordered: true,
  },
  // PostHog's fixture for this one has 12 groups; this one has 10
  {
    test: 'test_groups.test_aggregate_without_group_by_counts_all_groups',
    fixture: 'groups',
    hogql: 'SELECT count() FROM groups LIMIT 5',
    rows: [[10]],
  },
  {
    test: 'test_groups.test_null_limit_does_not_crash_the_compiler',
    fixture: 'groups',
    hogql: 'SELECT key FROM groups LIMIT NULL',
    fails: /LIMIT must be/,
  },
  {
    test: 'test_groups.test_array_join_is_not_pushed',
    fixture: 'groups',
    hogql: 'SELECT key FROM groups ARRAY JOIN [1, 2] AS x LIMIT 5',
    count: 5,
  },
  {
    test: 'test_groups.test_distinct_limit_is_not_pushed',
    fixture: 'groups',
    hogql: 'SELECT DISTINCT key FROM groups LIMIT 5',
    count: 5,
  },
  {
    test: 'test_groups.test_aliased_groups_select_still_pushes_limit',
    fixture: 'groups',
    hogql: 'SELECT g.key FROM groups AS g LIMIT 10',
    count: 10,
  },
]

// The examples of PostHog's SQL docs (posthog.com contents/docs/sql/expressions.mdx, "Use cases"),
// each as the SELECT that reads it, over the 'docs' fixture's two page views (posthog-query.test.ts):
// 09:30 (iOS, Chrome, a /blog URL with ref=news, $set.$geoip_city_name Berlin, two active flags) and
// 15:00 (Desktop, Safari, Mac OS X). Expected rows worked out by hand from those properties.
const doc = (hogql: string, rows: unknown[][]): PostHogCase => ({
  test: 'expressions.mdx',
  fixture: 'docs',
  hogql,
  rows,
})
export const POSTHOG_DOCS_CASES: PostHogCase[] = [
  doc("select extract(properties.$current_url, 'ref=([^&]*)') from events order by timestamp", [
    ['news'],
    [''],
  ]),
  doc(
    "select replaceOne(properties.$current_url, 'https://us.posthog.com', '/') from events order by timestamp",
    [['//blog/x?ref=news&y=1'], ['https://x.com/']],
  ),
  doc("select concat('OS Version: ', properties.$os_version) from events order by timestamp", [
    ['OS Version: 17'],
    ['OS Version: '],
  ]),
  doc(
    "select multiIf(properties.$device_type == 'Desktop', 'Desktop', properties.$os == 'iOS', 'iOS', 'Non-iOS') from events order by timestamp",
    [['iOS'], ['Desktop']],
  ),
  doc('select properties.$set.$geoip_city_name from events order by timestamp', [['Berlin'], [null]]),
  doc("select count() from events where dateDiff('minute', timestamp, now()) < 30", [[0]]),
  doc(
    "select sumIf(1, properties.$browser = 'Chrome') / sumIf(1, properties.$browser = 'Safari' or properties.$browser = 'Chrome') from events",
    [[0.5]],
  ),
  // as the docs write it: 09:30 is 'afternoon' (12 >= 9 and 9 < 17), 15:00 'night'
  doc(
    "select multiIf(5 >= toHour(timestamp) and toHour(timestamp) < 12, 'morning', 12 >= toHour(timestamp) and toHour(timestamp) < 17, 'afternoon', 'night') from events order by timestamp",
    [['afternoon'], ['night']],
  ),
  doc("select concat(properties.$os_name, ' - ', properties.$os_version) from events order by timestamp", [
    ['iOS - 17'],
    [' - '],
  ]),
  doc("select count() from events where (properties.$current_url LIKE '%/blog%')", [[1]]),
  doc('select count() from events where person.properties.$initial_utm_source IS NOT NULL', [[0]]),
  doc(
    "select arrayJoin(JSONExtractArrayRaw(properties.$active_feature_flags ?? '[]')) as flag from events order by flag",
    [['"a"'], ['"b"']],
  ),
  doc('select extract(elements_chain, \'[:|"]attr__id="(.*?)"\') from events order by timestamp', [
    [''],
    [''],
  ]),
  doc("select properties['$feature/cool-flag'] from events order by timestamp", [['test'], [null]]),
  doc('select count(distinct distinct_id) from events', [[2]]),
  doc("select count() from events where timestamp + interval 30 day > toDateTime('2024-02-01 12:00:00')", [
    [1],
  ]),
]

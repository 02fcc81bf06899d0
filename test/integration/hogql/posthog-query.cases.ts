// PostHog's own HogQL statements with the answers its tests expect: posthog/hogql/test/test_query.py
// (statements that need no PostHog-only table or setting) and the statements
// posthog/hogql/test/test_printer.py says must fail. posthog-query.test.ts inserts the same rows
// PostHog's tests create (one project per fixture) and runs every case on the server under test.
// Expected values are PostHog's; where a fixture differs from PostHog's (more events in a project)
// the comment says why the count differs.

/** The projects the cases read, each with the rows of one PostHog fixture (posthog-query.test.ts). */
export type Fixture = 'random' | 'extra' | 'windows' | 'pageview'

/** PostHog's random uuid property, fixed here so expected rows can name it. */
export const RANDOM = 'RANDOM_TEST_ID::0190e5b2-8d6f-7c31-9a44-3f1e2d5c6b7a'
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
  /** columns of the first row that PostHog's test checks, by position */
  first?: Record<number, unknown>
  /** PostHog's test only counts rows */
  count?: number
  /** 18.16 cannot run it: the 400's message there (the answer is checked on current releases) */
  newer?: RegExp
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
const NEWER_FN = /needs ClickHouse 26\.1 or later; this query is compiled for ClickHouse 18\.16/
const JSON_PATHS = /JSON paths into properties \(.*\) need ClickHouse 26\.1 or later/
const WINDOWS = /window functions \(OVER \/ WINDOW\) need ClickHouse 21\.9 or later/

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
    newer: JSON_PATHS,
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
    newer: NEWER_FN,
  },
  {
    test: 'test_hogql_proper_ifnull',
    fixture: 'random',
    hogql:
      "WITH latest_events AS (SELECT distinct_id, argMax(properties.$os_version, timestamp) AS latest_os_version FROM events WHERE properties.$os = 'iOS' AND timestamp >= now() - INTERVAL 30 DAY GROUP BY distinct_id), " +
      "major_versions AS (SELECT distinct_id, latest_os_version, splitByChar('.', ifNull(latest_os_version, ''))[1] AS major_version FROM latest_events) " +
      "SELECT major_version, count() AS user_count, round(100 * count() / sum(count()) OVER (), 2) AS percentage FROM major_versions WHERE major_version IN ('17', '18', '26') GROUP BY major_version ORDER BY major_version",
    rows: [],
    newer: WINDOWS,
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
    newer: NEWER_FN,
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
    newer: WINDOWS,
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
    newer: WINDOWS,
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
    newer: NEWER_FN,
  },
  {
    test: 'test_with_pivot_table_2_levels',
    fixture: 'random',
    hogql: `${pivotCtes}, final as (select * from PIVOT_FUNCTION_2) SELECT * FROM final ORDER BY col_a`,
    rows: pivot,
    newer: NEWER_FN,
  },
  {
    test: 'test_property_access_with_arrays',
    fixture: 'extra',
    hogql: `SELECT ${PROPERTY_PATHS.join(',')} FROM events WHERE properties.string = '${RANDOM}'`,
    rows: [PROPERTY_PATHS.map(() => RANDOM)],
    newer: JSON_PATHS,
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
    newer: NEWER_FN,
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
]

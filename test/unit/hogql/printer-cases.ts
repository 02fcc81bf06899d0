// The HogQL statements whose printed SQL is kept in __snapshots__/printer.sql.txt (printer.test.ts)
// and run, as printed there, against the real ClickHouse (test/integration/hogql/snapshots.test.ts).
// Add a case for every construct the printer learns; never edit the snapshot file by hand.

/** One statement to print: the HogQL, and what it is compiled with besides team 4242. */
export interface PrinterCase {
  hogql: string
  timezone?: string
  values?: Record<string, unknown>
  /** What `{filters}` stands for (the query runner builds it from HogQLQuery filters). */
  filters?: string
}

/** The team every snapshot is printed for. */
export const SNAPSHOT_TEAM = 4242

/** The cases, in the order the snapshot file lists them. */
export const PRINTER_CASES: PrinterCase[] = [
  // plain reads of every table
  { hogql: 'select event, timestamp, distinct_id from events order by timestamp desc limit 10' },
  { hogql: 'select * from events limit 1' },
  { hogql: 'select id, created_at, properties.email, is_identified from persons' },
  { hogql: 'select distinct_id, person_id from person_distinct_ids' },
  { hogql: 'select index, key, properties.name from groups where index = 0' },
  {
    hogql:
      "select flag, variant, day, source, calls, unique_persons from feature_flag_usage where flag = 'beta'",
  },
  // properties
  { hogql: "select properties.$browser, properties['a']['b'], properties.a.b from events" },
  {
    hogql:
      'select count() from events where properties.n > 3 and properties.ok = true and properties.x is null',
  },
  {
    hogql:
      "select count() from events where properties.plan in ('pro', 'team') and properties.n not in (1, 2)",
  },
  {
    hogql:
      "select person.properties.email, person.created_at from events where person.properties.plan = 'pro'",
  },
  // persons through overrides
  { hogql: 'select person_id, count() from events group by person_id' },
  {
    hogql:
      'select e.person.id, pdi.distinct_id from events e join person_distinct_ids pdi on e.distinct_id = pdi.distinct_id',
  },
  // joins: two tables, nested chains, inner as left, using
  { hogql: 'select e.event, p.properties.email from events e join persons p on e.person_id = p.id' },
  { hogql: 'select e.event, p.properties.email from events e left join persons p on e.person_id = p.id' },
  {
    hogql:
      'select e.event, p.properties.email, g.properties.name, person.properties.plan from events e join persons p on e.person_id = p.id left join groups g on g.key = e.$group_0',
  },
  {
    hogql:
      'select a.event, b.c from events a join (select event, count() as c from events group by event) b using (event)',
  },
  { hogql: 'select count() from events e cross join (select 1 as one) o' },
  // subqueries, CTEs, unions
  {
    hogql:
      'select count() from (select event, timestamp from events where timestamp > now() - interval 7 day) sub',
  },
  { hogql: 'with x as (select event from events) select count() from x' },
  { hogql: 'with 3 as n select n + 1' },
  {
    hogql:
      "select count() from events where person_id in (select id from persons where properties.plan = 'pro')",
  },
  { hogql: 'select (select count() from groups), event from events limit 1' },
  { hogql: 'select event from events union all select toString(id) from persons' },
  { hogql: 'select event from events union distinct select event from events' },
  // clauses
  { hogql: 'select distinct event from events' },
  {
    hogql:
      'select event, count() as c from events group by event having c > 1 order by c desc limit 5 offset 2',
  },
  { hogql: 'select event, timestamp from events order by timestamp limit 1 by event' },
  { hogql: "select event, 1 + 2 * 3 / 4 % 5, -1 from events where not (event = 'a' or event != 'b')" },
  {
    hogql: "select count() from events where event like '%a%' and event ilike '%B%' and event not ilike 'c%'",
  },
  { hogql: "select count() from events where event =~ '^a' and event !~* 'B$'" },
  { hogql: "select count() from events where timestamp between '2024-01-01' and '2024-02-01'" },
  // bounds on the day imply timestamp and sort-key bounds inside the guarded read (guard.ts)
  {
    hogql:
      "select count() from events where toDate(timestamp) >= '2024-01-01' and toDate(timestamp) < '2024-01-10'",
    timezone: 'America/New_York',
  },
  { hogql: "select event, v, k from events array join [1, 2] as v, ['a', 'b'] as k" },
  // functions
  {
    hogql:
      "select toInt('12'), toFloat('1.5'), toDate('2024-01-02'), toDateTime('2024-01-02 03:04:05'), toUUID('00000000-0000-0000-0000-000000000001')",
  },
  {
    hogql:
      'select toInt(properties.n), toFloat(properties.f), toDate(properties.d), toString(timestamp) from events',
  },
  {
    hogql:
      'select arrayMap(x -> x * 2, [1, 2]), arrayFilter(x -> x > 1, [1, 2]), arraySort((x, y) -> y, [1, 2], [2, 1])',
  },
  {
    hogql:
      "select toStartOfWeek(timestamp), toStartOfWeek(timestamp, 1), toStartOfMonth(timestamp), dateDiff('day', timestamp, now()) from events",
  },
  {
    hogql:
      "select dateAdd('quarter', 1, timestamp), dateSub('hour', 2, timestamp), toIntervalQuarter(1) from events",
  },
  {
    hogql:
      "select trim(event), lower(event), concat(event, '-', distinct_id), substring(event, 1, 2) from events",
  },
  {
    hogql:
      "select if(event = 'a', 1, 0), multiIf(event = 'a', 1, event = 'b', 2, 3), case when event = 'a' then 1 else 2 end from events",
  },
  {
    hogql:
      "select count(*), count(distinct event), countIf(event = 'a'), sumIf(1, event = 'b'), quantile(0.5)(1), avg(1) from events",
  },
  { hogql: "select uniqExact(distinct_id) filter (where event = 'a') from events" },
  { hogql: "select event::string, '1'::int, timestamp::date from events" },
  // placeholders and time zones
  {
    hogql: 'select count() from events where event = {e} and timestamp > {t}',
    values: { e: "it's", t: '2024-01-01' },
  },
  { hogql: 'select timestamp, toStartOfDay(timestamp), now() from events', timezone: 'America/New_York' },
  {
    hogql:
      "select count() from events where timestamp >= '2024-01-01 00:00:00' and timestamp < toDateTime('2024-02-01 00:00:00')",
    timezone: 'Europe/Berlin',
  },
  // window functions
  {
    hogql:
      'select event, row_number() over (partition by event order by timestamp desc rows between 1 preceding and current row) as rn, sum(1) over w, lagInFrame(event, 1) over (order by timestamp) from events window w as (partition by distinct_id)',
  },
  {
    hogql:
      'select event, c, rank() over (order by c desc) from (select event, count() as c from events group by event)',
  },
  // conversions as PostHog maps them (accurateCastOrNull)
  {
    hogql: 'select toInt(properties.n), toFloat(event), toUUID(distinct_id), toDate(event) from events',
  },
  // null-safe comparisons (PostHog's test_null_equality): wrapped only where a side can be NULL
  { hogql: 'select a < b, a = b, a != b, a like b from (select null as a, 2 as b)' },
  {
    hogql:
      "select properties.plan = 'pro', event = 'x' from events where not (properties.plan = 'pro') and properties.plan not in ('a', null)",
  },
  // concat reads NULL as ''
  { hogql: "select concat(null, 'a', 3, toString(4), toString(NULL)), event || properties.x from events" },
  // a joined table whose join key needs its own lazy join: wrapped with it into one subquery
  { hogql: 'SELECT e1.event, e2.event FROM events e1 JOIN events e2 ON e1.person_id = e2.person_id' },
  { hogql: 'SELECT persons.id, events.event FROM persons JOIN events ON persons.id = events.person_id' },
  // more of PostHog's functions; numbers(); countIf(DISTINCT ...)
  {
    hogql: "select arrayReduce('max', [1, 2]), gcd(4, 6), cutQueryString('https://a.com/?x=1'), toInt32('7')",
  },
  { hogql: 'select sum(number) from numbers(2, 10)' },
  { hogql: "select countIf(distinct event, timestamp > '2024-01-01') from events" },
  { hogql: "select JSONExtractInt(properties, 'n'), arrayZip([1], ['a']) from events" },
  { hogql: 'select event from events intersect select event from events' },
  { hogql: "trim(LEADING 'x' FROM event), now('Asia/Tokyo') from events".replace(/^/, 'select ') },
  { hogql: "select event as t, x from events array join [t, 'z'] as x" },
  // numbers() of constant expressions, checked by the server
  { hogql: 'select number from numbers(2 + 2)' },
  { hogql: 'select number from numbers(1, 2 + 1)' },
  // PostHog's sortableSemVer; reverse of an array; sumMap and tuple access through nested aliases
  { hogql: "select sortableSemVer('1.2.3'), reverse([1, 2]), reverse('ab')" },
  {
    hogql:
      'select (sumMap(g.1, g.2) as x).1, x.2 from (select groupArray((number, number)) as g from numbers(3))',
  },
  // events.pdi: the distinct id's person_distinct_ids row
  { hogql: 'select event, pdi.distinct_id, pdi.person_id, pdi.person.properties.email from events' },
  // {filters} with filters given
  {
    hogql: 'select event from events e where {filters}',
    filters: "(properties['plan'] = 'pro') AND (timestamp >= '2020-01-01 00:00:00')",
  },
  // WITH TIES, non-equality join conditions, toStartOfInterval
  {
    hogql: 'select number from numbers(10) order by intDiv(number, 3) limit 2 with ties',
  },
  {
    hogql:
      'select e1.event, e2.event from events e1 join events e2 on e1.distinct_id = e2.distinct_id and e1.timestamp < e2.timestamp',
  },
  { hogql: 'select toStartOfInterval(timestamp, interval 15 minute) from events' },
  // JSON paths into a property (PostHog's test_property_access_with_arrays)
  { hogql: "select properties.list.1, properties.list[2]['id'] from events" },
  // events.poe: the person as stamped on the event
  { hogql: 'select poe.id, poe.properties.email from events' },
  { hogql: 'select poe.id, count() from events group by poe.id' },
  // SAMPLE on events: the cityHash64(distinct_id) range PostHog's sampling key reads, in the guard
  { hogql: 'select count() from events sample 1/10 offset 1/2' },
  { hogql: 'select event from events sample 1' },
  // LIMIT / OFFSET: literal arithmetic computed; other constant expressions printed capped
  { hogql: 'select event from events limit 1 + 1 offset 2 * 2' },
  { hogql: 'select event from events order by event limit (select 1) with ties' },
  // INTERSECT binds tighter than UNION ALL
  { hogql: 'select 1 as id union all select 2 as id intersect select 3 as id' },
  // a CTE of one SELECT of a union is visible in the later ones
  { hogql: 'with a as (select 1 as x) select x from a union all select x from a' },
  // lag / lead as PostHog prints them
  {
    hogql:
      'select lag(event) over (partition by distinct_id order by timestamp), lead(event, 1) over w from events window w as (order by timestamp)',
  },
  { hogql: 'select sparkline([1, 2, 3])' },
  // a query that reads both join keys besides comparing them in ON
  { hogql: 'select e1.event, e2.event from events e1 join events e2 on e1.event = e2.event' },
]

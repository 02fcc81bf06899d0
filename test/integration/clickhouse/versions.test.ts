// Issue 13's proof that both ClickHouse releases give the same answers: two Burrows side by side,
// each started as a user starts it, one on Debian's clickhouse-server 18.16 (started by Burrow itself)
// and one on the run's current ClickHouse (26.x, chdb behind the test server), get the same events
// through capture; then every answer a user can ask for must be the same on both: HogQL, every
// insight kind, persons and their exports, funnel correlation, flag usage, recordings, a
// materialized property, and all of it again after `replay` rebuilt the tables from the log.
//
// It runs once per suite run, in the clickhouse-26 project (it starts its own 18.16 beside the
// run's current server); in the clickhouse-18.16 project it is skipped for that reason.
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { clickhouseClient, selectRows } from '../../../src/clickhouse/client.ts'
import { materializeProperty } from '../../../src/clickhouse/materialize.ts'
import { TableAdmin } from '../../../src/clickhouse/table-admin.ts'
import { loadConfig } from '../../../src/config/env.ts'
import { connectNats } from '../../../src/jetstream/connection.ts'
import { createLogger } from '../../../src/observability/logger.ts'
import { replay } from '../../../src/projectors/replay.ts'
import { type RunningBurrow, startBurrow } from '../../../src/runtime/start.ts'
import { api, onChdb, stack, tempDir } from '../../harness/index.ts'
import { rr, snapshotBody } from '../recordings/helpers.ts'

interface Side {
  name: string
  burrow: RunningBurrow
  call: ReturnType<typeof api>
  database: string
  version: string
}
const sides: Side[] = []

async function startSide(name: string, env: Record<string, string>): Promise<Side> {
  const config = loadConfig({
    DATA_DIR: tempDir(`burrow-${name}-`),
    PORT: '0',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    API_RATE_LIMIT_PER_MINUTE: '100000',
    ...env,
  })
  const burrow = await startBurrow(config, createLogger(config.LOG_LEVEL))
  const ch = clickhouseClient(burrow.stack.clickhouseUrl, config.CLICKHOUSE_DATABASE)
  const [row] = await selectRows<{ v: string }>(ch, 'SELECT version() AS v')
  await ch.close()
  return {
    name,
    burrow,
    call: api(burrow.url, burrow.credentials.personal_api_key),
    database: config.CLICKHOUSE_DATABASE,
    version: row?.v ?? '',
  }
}

// ---- the events: persons who identify, alias and merge; groups; flags; a historical decade -----

const DAY = (d: number, h = 10) => new Date(Date.UTC(2024, 2, d, h, 0, 0)).toISOString()
const uuid = (n: number) => `0190a000-0000-7000-8000-${n.toString(16).padStart(12, '0')}`

function events() {
  const out: Record<string, unknown>[] = []
  let n = 0
  const ev = (
    event: string,
    distinct_id: string,
    timestamp: string,
    properties: object = {},
    top: object = {},
  ) => out.push({ uuid: uuid(++n), event, distinct_id, timestamp, properties, ...top })
  for (let p = 0; p < 12; p++) {
    const anon = `anon-${p}`
    const user = `user-${p}`
    const plan = p % 3 === 0 ? 'pro' : 'free'
    for (let d = 1; d <= 7; d++) {
      if ((p + d) % 4 === 0) continue
      ev('$pageview', d < 3 ? anon : user, DAY(d, 8 + (p % 5)), {
        $current_url: `https://example.com/${p % 4}`,
        $browser: p % 2 ? 'Chrome' : 'Firefox',
        n: String(p * d),
        $groups: { company: `co-${p % 3}` },
      })
    }
    ev('signup', anon, DAY(2, 12), { source: p % 2 ? 'ads' : 'seo' })
    ev('$identify', user, DAY(3, 9), { $anon_distinct_id: anon }, { $set: { email: `${user}@x.io`, plan } })
    if (p % 2 === 0) ev('activate', user, DAY(4, 11))
    if (p % 4 === 0) ev('pay', user, DAY(5, 15), { amount: p * 10 })
    if (p % 5 === 0) ev('$create_alias', user, DAY(5, 16), { alias: `alias-${p}` })
    ev('$feature_flag_called', user, DAY(3 + (p % 3), 13), {
      $feature_flag: 'new-checkout',
      $feature_flag_response: p % 2 ? 'test' : 'control',
    })
  }
  ev('$groupidentify', 'user-0', DAY(1), {
    $group_type: 'company',
    $group_key: 'co-0',
    $group_set: { size: 10 },
  })
  ev('$merge_dangerously', 'user-1', DAY(6), { alias: 'user-2' })
  return out
}

/** Monthly events over ten years, sent as one historical batch (more than 100 partitions). */
function historical() {
  return Array.from({ length: 120 }, (_, m) => ({
    uuid: uuid(10_000 + m),
    event: 'legacy',
    distinct_id: `old-${m % 7}`,
    timestamp: new Date(Date.UTC(2010, m, 15)).toISOString(),
    properties: { m },
  }))
}

const TOTAL = events().length + historical().length
// Recent, so that recordings retention (30 days) keeps it; the same instant on both sides.
const sessionStart = Date.now() - 60_000

async function hogql(s: Side, query: string) {
  const r = await s.call('POST', `/api/environments/${s.burrow.credentials.project_id}/query/`, {
    query: { kind: 'HogQLQuery', query },
    refresh: 'force_blocking',
  })
  return r
}

async function waitProjected(s: Side) {
  const deadline = Date.now() + 60_000
  for (;;) {
    const r = await hogql(s, 'SELECT count() FROM events')
    if (r.status === 200 && r.body.results[0][0] === TOTAL) return
    if (Date.now() > deadline) throw new Error(`${s.name}: events not projected: ${r.text}`)
    await new Promise((res) => setTimeout(res, 250))
  }
}

// ---- what is compared -------------------------------------------------------------------------

const dateRange = { date_from: '2024-03-01', date_to: '2024-03-07' }
const pv = { kind: 'EventsNode', event: '$pageview' }
const INSIGHTS: Record<string, object> = {
  'trends DAU': { kind: 'TrendsQuery', series: [{ ...pv, math: 'dau' }], dateRange },
  'trends breakdown': {
    kind: 'TrendsQuery',
    series: [pv],
    dateRange,
    breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' },
  },
  'trends by person property': {
    kind: 'TrendsQuery',
    series: [{ ...pv, math: 'dau' }],
    dateRange,
    breakdownFilter: { breakdown: 'plan', breakdown_type: 'person' },
  },
  funnel: {
    kind: 'FunnelsQuery',
    series: ['signup', 'activate', 'pay'].map((event) => ({ kind: 'EventsNode', event })),
    dateRange,
    funnelsFilter: { funnelWindowInterval: 7, funnelWindowIntervalUnit: 'day' },
  },
  retention: {
    kind: 'RetentionQuery',
    dateRange: { date_to: '2024-03-07' },
    retentionFilter: {
      retentionType: 'retention_first_time',
      period: 'Day',
      totalIntervals: 5,
      targetEntity: { id: '$pageview', type: 'events' },
      returningEntity: { id: '$pageview', type: 'events' },
    },
  },
  lifecycle: { kind: 'LifecycleQuery', series: [pv], dateRange },
  stickiness: { kind: 'StickinessQuery', series: [pv], dateRange },
  'funnel correlation': {
    kind: 'FunnelCorrelationQuery',
    source: {
      kind: 'FunnelsActorsQuery',
      source: {
        kind: 'FunnelsQuery',
        series: ['signup', 'pay'].map((event) => ({ kind: 'EventsNode', event })),
        dateRange,
      },
    },
    funnelCorrelationType: 'events',
  },
  'actors of a trends point': {
    kind: 'ActorsQuery',
    source: {
      kind: 'InsightActorsQuery',
      source: { kind: 'TrendsQuery', series: [{ ...pv, math: 'dau' }], dateRange },
      day: '2024-03-04',
    },
  },
}

const HOGQL: Record<string, string> = {
  'events by name': 'SELECT event, count() FROM events GROUP BY event ORDER BY event',
  'persons and their distinct ids':
    'SELECT person.properties.email AS email, count(DISTINCT distinct_id) FROM events GROUP BY email ORDER BY email',
  'person merges': "SELECT count(DISTINCT person_id) FROM events WHERE event != 'legacy'",
  'properties and conversions':
    'SELECT properties.$browser, sum(toInt(properties.n)), max(toFloat(properties.amount)) FROM events WHERE properties.$browser IS NOT NULL GROUP BY 1 ORDER BY 1',
  'by day in the project time zone':
    "SELECT toStartOfDay(timestamp) AS d, uniq(person_id) FROM events WHERE timestamp >= '2024-03-01' GROUP BY d ORDER BY d",
  'historical decade':
    "SELECT toYear(timestamp) AS y, count() FROM events WHERE event = 'legacy' GROUP BY y ORDER BY y",
  groups: 'SELECT key, properties.size FROM groups ORDER BY key',
  'flag usage':
    'SELECT flag, variant, sum(calls), sum(unique_persons) FROM feature_flag_usage GROUP BY flag, variant ORDER BY flag, variant',
  'a join of persons and events':
    'SELECT p.properties.plan AS plan, count() FROM events e JOIN persons p ON e.person_id = p.id GROUP BY plan ORDER BY plan',
}

/** Everything a user can read back, keyed by what it is; the same keys on both sides. */
type Answers = Record<string, unknown>
type Reply = Awaited<ReturnType<typeof hogql>>

async function answers(s: Side): Promise<Answers> {
  const pid = s.burrow.credentials.project_id
  const out: Record<string, unknown> = {}
  for (const [name, query] of Object.entries(HOGQL)) {
    const r = await hogql(s, query)
    out[`hogql: ${name}`] = [r.status, r.body.results]
  }
  for (const [name, query] of Object.entries(INSIGHTS)) {
    const r = await s.call('POST', `/api/environments/${pid}/query/`, { query, refresh: 'force_blocking' })
    out[`insight: ${name}`] = [r.status, stripVolatile(r.body.results)]
  }
  const persons = await s.call('GET', `/api/environments/${pid}/persons/?limit=100`)
  out['persons list'] = [
    persons.status,
    (persons.body.results as { distinct_ids: string[]; properties: object }[])
      .map((p) => ({ ids: [...p.distinct_ids].sort(), properties: p.properties }))
      .sort((a, b) => String(a.ids[0]).localeCompare(String(b.ids[0]))),
  ]
  const trendsPeople = await s.call(
    'GET',
    `/api/environments/${pid}/persons/trends/?entity_id=%24pageview&date_from=2024-03-04&date_to=2024-03-04&format=csv`,
  )
  out['persons/trends csv'] = [trendsPeople.status, trendsPeople.text.split('\n').sort()]
  const recordings = await s.call('GET', `/api/environments/${pid}/session_recordings/`)
  out.recordings = [
    recordings.status,
    (recordings.body.results as Record<string, unknown>[]).map((r) => ({
      id: r.id,
      distinct_id: r.distinct_id,
      duration: r.recording_duration,
      clicks: r.click_count,
      keypresses: r.keypress_count,
      errors: r.console_error_count,
    })),
  ]
  return out
}

/** Fields that differ by when or where the answer was computed, not by what it says. */
function stripVolatile(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stripVolatile)
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.entries(v)
        .filter(([k]) => !['last_refresh', 'next_allowed_client_refresh', 'timings', 'query_id'].includes(k))
        .map(([k, x]) => [k, stripVolatile(x)]),
    )
  }
  return v
}

describe.skipIf(!onChdb())('the same events give the same answers on ClickHouse 18.16 and 26.x', () => {
  beforeAll(async () => {
    const s = stack()
    // 18.16: Burrow starts its own nats-server and clickhouse-server, as `burrow start` does.
    sides.push(await startSide('ch18', {}))
    // 26.x: the run's chdb server (own database), with a nats-server of Burrow's own.
    sides.push(
      await startSide('ch26', { CLICKHOUSE_URL: s.clickhouseUrl, CLICKHOUSE_DATABASE: 'versions_cmp' }),
    )
    for (const side of sides) {
      const token = side.burrow.credentials.project_api_key
      const post = (path: string, body: unknown) =>
        fetch(`${side.burrow.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
          body: gzipSync(JSON.stringify(body)),
        })
      expect((await post('/batch/', { api_key: token, batch: events() })).status).toBe(200)
      const old = await post('/batch/', { api_key: token, historical_migration: true, batch: historical() })
      expect(old.status).toBe(200)
      const snaps = snapshotBody(token, [
        {
          session: '0190a000-aaaa-7000-8000-000000000001',
          window: 'w1',
          distinctId: 'user-3',
          events: [
            rr.meta(sessionStart, 'https://example.com/0'),
            rr.full(sessionStart + 1),
            rr.click(sessionStart + 2_000),
            rr.input(sessionStart + 3_000),
            rr.console(sessionStart + 4_000, 'error'),
            rr.move(sessionStart + 30_000),
          ],
        },
      ])
      const s1 = await fetch(`${side.burrow.url}/s/`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: gzipSync(JSON.stringify(snaps)),
      })
      expect(s1.status).toBe(200)
      await waitProjected(side)
    }
  }, 240_000)

  afterAll(async () => {
    for (const s of sides.splice(0)) await s.burrow.stop().catch(() => undefined)
  })

  it('runs one side on each release', () => {
    expect(sides.map((s) => s.version.split('.')[0])).toEqual(['18', '26'])
  })

  it('answers every query kind the same on both', async () => {
    const [a, b] = (await Promise.all(sides.map(answers))) as [Answers, Answers]
    // Not vacuous: every answer succeeded and says something.
    for (const [k, v] of Object.entries(a)) {
      const [status, body] = v as [number, unknown]
      expect(status, `${k} on 18.16`).toBe(200)
      expect(JSON.stringify(body).length, `${k} is empty`).toBeGreaterThan(4)
    }
    for (const k of Object.keys(a)) expect(b[k], k).toEqual(a[k])
  })

  it('answers the same after a property is materialized', async () => {
    for (const s of sides) {
      const ch = clickhouseClient(s.burrow.stack.clickhouseUrl, s.database)
      await materializeProperty(ch, TableAdmin.single(ch), '$browser')
      await ch.close()
    }
    const q = 'SELECT properties.$browser AS b, count() FROM events GROUP BY b ORDER BY b'
    const [a, b] = (await Promise.all(sides.map((s) => hogql(s, q)))) as [Reply, Reply]
    expect(a.status, a.text).toBe(200)
    // Chrome, Firefox and the events without the property (NULL sorts last)
    expect(a.body.results.map((r: unknown[]) => r[0])).toEqual(['Chrome', 'Firefox', null])
    expect(b.body.results).toEqual(a.body.results)
  })

  it('answers the same after replay rebuilt every table from the log', async () => {
    const before = await answers(sides[0] as Side)
    for (const s of sides) {
      const nc = await connectNats(s.burrow.stack.natsUrl, 'versions-replay')
      const ch = clickhouseClient(s.burrow.stack.clickhouseUrl, s.database)
      const r = await replay({ nc, ch, log: createLogger('silent') })
      expect(r.swapped).toBe(true)
      await ch.close()
      await nc.close()
    }
    const [a, b] = (await Promise.all(sides.map(answers))) as [Answers, Answers]
    for (const k of Object.keys(before)) {
      expect(a[k], `18.16 after replay: ${k}`).toEqual(before[k])
      expect(b[k], `26 after replay: ${k}`).toEqual(before[k])
    }
  }, 180_000)
})

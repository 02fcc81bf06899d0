// The sessions pieces that need no server: the channel definitions' shape, the guarded reads of the
// sessions table and events.session, and the replay's view statement. What the SQL answers is
// checked on the real server (test/integration/sessions/).
import { describe, expect, it } from 'vitest'
import { compileHogQL } from '../../../src/hogql/index.ts'
import { MEDIUM_CHANNELS, SOURCE_CATEGORIES } from '../../../src/sessions/channel-definitions.ts'
import {
  channelTypeExpr,
  HOGQL_LOOKUPS,
  initialChannelInputs,
  SQL_LOOKUPS,
} from '../../../src/sessions/channel-type.ts'
import { RAW_SESSIONS_VIEW, sessionsViewDDL } from '../../../src/sessions/replay.ts'
import { guardedReads, unguardedReads } from '../hogql/sql-shape.ts'

const TEAM = 42
const sql = async (q: string) => (await compileHogQL(q, { teamId: TEAM })).clickhouse

describe('channel definitions', () => {
  it('names sources in lower case, as the rules compare them', () => {
    for (const k of [...SOURCE_CATEGORIES.keys(), ...MEDIUM_CHANNELS.keys()]) expect(k).toBe(k.toLowerCase())
  })

  it('keeps the domains PostHog’s channel-type tests name, in their categories', () => {
    expect(SOURCE_CATEGORIES.get('google.co.uk')).toBe('Search')
    expect(SOURCE_CATEGORIES.get('plus.google.com')).toBe('Social')
    expect(SOURCE_CATEGORIES.get('shopping.yahoo.co.jp')).toBe('Shopping')
    expect(SOURCE_CATEGORIES.get('youtube.com')).toBe('Video')
    expect(MEDIUM_CHANNELS.get('email')).toEqual({ paid: null, organic: 'Email' })
  })

  it('prints each lookup table once per lookup, small enough for a query', () => {
    const expr = channelTypeExpr(initialChannelInputs(), SQL_LOOKUPS)
    // four lookups of the domain list (paid and organic, by source and by referring domain)
    expect(expr.split("'news.ycombinator.com'").length - 1).toBe(4)
    expect(expr.length).toBeLessThan(30_000)
  })

  it('keeps the lookup tables out of the HogQL text (its parser is slow over long arrays)', () => {
    const expr = channelTypeExpr(initialChannelInputs(), HOGQL_LOOKUPS)
    expect(expr).not.toContain('news.ycombinator.com')
    expect(expr.length).toBeLessThan(3_000)
  })
})

describe('the sessions table', () => {
  it.each([
    'select count() from sessions',
    'select * from sessions',
    "select $channel_type from sessions where session_id = 's1'",
    'select event, session.$entry_pathname from events',
    "select count() from events where events.session.$entry_pathname = '/x'",
    'select person.$virt_initial_channel_type from events',
  ])('reads raw_sessions (and every other table) through the guard: %s', async (q) => {
    const printed = await sql(q)
    expect(unguardedReads(printed, TEAM)).toEqual([])
    expect(guardedReads(printed).length).toBeGreaterThan(0)
  })

  it('merges the guarded rows by session, never the whole table', async () => {
    const printed = await sql('select session_id from sessions')
    expect(printed).toContain('FROM `raw_sessions` PREWHERE team_id = 42 GROUP BY `session_id`')
  })

  it('hands a condition on session_id to the guarded read', async () => {
    const printed = await sql("select $pageview_count from sessions where session_id = 's1'")
    expect(printed).toMatch(
      /FROM `raw_sessions` PREWHERE team_id = 42 AND .*`session_id`.*'s1'.* GROUP BY `session_id`/,
    )
  })

  it('joins events.session on $session_id', async () => {
    const printed = await sql('select session.$channel_type from events')
    expect(printed).toMatch(/LEFT JOIN .*`raw_sessions`.* ON .*`session_id`/s)
  })
})

describe("the replay's view", () => {
  it('is the migration’s view with its own names', () => {
    const ddl = sessionsViewDDL({ view: 'v_r', events: 'events_r', sessions: 'raw_sessions_r' })
    expect(ddl).toMatch(/^CREATE MATERIALIZED VIEW IF NOT EXISTS v_r TO raw_sessions_r AS\s/)
    expect(ddl).toContain('FROM events_r\n')
    expect(ddl).not.toMatch(/\bFROM events\b/)
    expect(ddl).not.toContain(RAW_SESSIONS_VIEW)
  })

  it('reads the timestamp only, never its epoch-milliseconds twin', () => {
    const ddl = sessionsViewDDL({ view: RAW_SESSIONS_VIEW, events: 'events', sessions: 'raw_sessions' })
    expect(ddl).toContain('toDateTime64(timestamp, 6')
    expect(ddl).not.toContain('timestamp_ms')
  })
})

// The sessions table and events.session (docs/sessions.md) on the real server, with the cases of
// PostHog's posthog/hogql/database/schema/test/test_sessions_v2.py and their expected answers. Each
// case is a project of its own; its events go into `events`, and only the materialized view builds
// raw_sessions from them.
import { describe, expect, it } from 'vitest'
import { clickhouse, uniqueTeamId } from '../../harness/index.ts'
import { hogql, insertSessionEvents } from './helpers.ts'

const ch = clickhouse()

describe("PostHog's test_sessions_v2 cases", () => {
  it('test_select_star_from_sessions: one row for the session', async () => {
    const team = uniqueTeamId()
    await insertSessionEvents(ch, team, [
      { event: '$pageview', session: 's1', properties: { $current_url: 'https://example.com' } },
    ])
    const rows = await hogql(ch, team, "select * from sessions where session_id = 's1'")
    expect(rows).toHaveLength(1)
  })

  it('test_channel_type: gad_source 1 is Paid Search, on sessions and through events.session', async () => {
    const team = uniqueTeamId()
    await insertSessionEvents(ch, team, [
      { event: '$pageview', session: 's1', properties: { gad_source: '1' } },
    ])
    expect(await hogql(ch, team, "select $channel_type from sessions where session_id = 's1'")).toEqual([
      ['Paid Search'],
    ])
    // test_session_dot_channel_type
    expect(
      await hogql(ch, team, "select session.$channel_type from events where $session_id = 's1'"),
    ).toEqual([['Paid Search']])
    expect(
      await hogql(ch, team, "select events.session.$channel_type from events where $session_id = 's1'"),
    ).toEqual([['Paid Search']])
  })

  it('test_persons_and_sessions_on_events: each event sees its own session', async () => {
    const team = uniqueTeamId()
    await insertSessionEvents(ch, team, [
      { event: '$pageview', distinctId: 'd1', session: 's1', properties: { utm_source: 'source1' } },
      { event: '$pageview', distinctId: 'd2', session: 's2', properties: { utm_source: 'source2' } },
    ])
    const rows = await hogql(
      ch,
      team,
      "select distinct_id, session.$entry_utm_source from events where $session_id = 's1' or $session_id = 's2' order by 2 asc",
    )
    expect(rows).toEqual([
      ['d1', 'source1'],
      ['d2', 'source2'],
    ])
  })

  it('test_empty_counts: a session without page views, autocaptures or screens counts 0 of each', async () => {
    const team = uniqueTeamId()
    await insertSessionEvents(ch, team, [{ event: 'other_event', session: 's1', at: '2024-07-17 00:00:00' }])
    expect(
      await hogql(
        ch,
        team,
        "select $pageview_count, $autocapture_count, $screen_count from sessions where id = 's1'",
      ),
    ).toEqual([['0', '0', '0']])
  })

  it('test_counts: 1 page view, 2 autocaptures, 3 screens', async () => {
    const team = uniqueTeamId()
    const at = '2023-12-02 00:00:00'
    await insertSessionEvents(ch, team, [
      { event: '$pageview', session: 's1', at },
      ...[1, 2].map(() => ({ event: '$autocapture', session: 's1', at })),
      ...[1, 2, 3].map(() => ({ event: '$screen', session: 's1', at })),
    ])
    expect(
      await hogql(
        ch,
        team,
        "select $pageview_count, $autocapture_count, $screen_count from sessions where id = 's1'",
      ),
    ).toEqual([['1', '2', '3']])
  })

  it('test_idempotent_event_counts: the same event inserted five times counts once', async () => {
    const team = uniqueTeamId()
    const at = '2023-12-02 00:00:00'
    const ids = [
      '00000000-0000-4000-8000-00000000a001',
      '00000000-0000-4000-8000-00000000a002',
      '00000000-0000-4000-8000-00000000a003',
    ]
    for (let i = 0; i < 5; i++) {
      await insertSessionEvents(ch, team, [
        { event: '$pageview', session: 's1', at, uuid: ids[0] },
        { event: '$autocapture', session: 's1', at, uuid: ids[1] },
        { event: '$screen', session: 's1', at, uuid: ids[2] },
      ])
    }
    expect(
      await hogql(
        ch,
        team,
        "select $pageview_count, $autocapture_count, $screen_count from sessions where id = 's1'",
      ),
    ).toEqual([['1', '1', '1']])
  })

  it('test_page_screen_autocapture_count_up_to: counts up to 2', async () => {
    const team = uniqueTeamId()
    const d = '2023-12-02 00:00:00'
    const d2 = '2023-12-03 00:00:00'
    await insertSessionEvents(ch, team, [
      { event: '$pageview', session: 's1', at: d },
      { event: '$pageview', session: 's1', at: d2 },
      { event: '$pageview', session: 's2', at: d },
      { event: '$autocapture', session: 's2', at: d2 },
      { event: '$pageview', session: 's3', at: d },
      ...[1, 2, 3, 4].map(() => ({ event: '$pageview', session: 's4', at: d })),
      { event: '$screen', session: 's5', at: d },
    ])
    expect(
      await hogql(ch, team, 'select $page_screen_autocapture_count_up_to from sessions ORDER BY session_id'),
    ).toEqual([['2'], ['2'], ['1'], ['2'], ['1']])
  })

  it('test_bounce_rate: one page view under 10 seconds without autocapture is a bounce', async () => {
    const team = uniqueTeamId()
    const pv = (session: string, n: number, at: string, event = '$pageview') => ({
      event,
      session,
      at,
      properties: { $current_url: `https://example.com/${n}` },
    })
    await insertSessionEvents(ch, team, [
      pv('s1a', 1, '2023-12-02 00:00:00'),
      pv('s1a', 2, '2023-12-03 00:00:00'),
      pv('s1b', 3, '2023-12-12 00:00:00'),
      pv('s2', 4, '2023-12-11 00:00:00'),
      pv('s3', 5, '2023-12-11 00:00:00'),
      pv('s3', 5, '2023-12-11 00:00:00', '$autocapture'),
      pv('s4', 6, '2023-12-11 12:00:00'),
      pv('s4', 6, '2023-12-11 12:00:01', '$pageleave'),
      pv('s5', 7, '2023-12-11 12:00:00'),
      pv('s5', 7, '2023-12-11 12:00:11', '$pageleave'),
    ])
    expect(await hogql(ch, team, 'select $is_bounce, session_id from sessions ORDER BY session_id')).toEqual([
      ['0', 's1a'],
      ['1', 's1b'],
      ['1', 's2'],
      ['0', 's3'],
      ['1', 's4'],
      ['0', 's5'],
    ])
  })

  it('test_custom_bounce_rate_duration (default duration): 15 seconds is no bounce', async () => {
    const team = uniqueTeamId()
    await insertSessionEvents(ch, team, [
      { event: '$pageview', session: 's', at: '2023-12-11 12:00:00' },
      { event: '$pageleave', session: 's', at: '2023-12-11 12:00:15' },
    ])
    expect(await hogql(ch, team, 'select $is_bounce, session_id from sessions ORDER BY session_id')).toEqual([
      ['0', 's'],
    ])
  })

  it('test_last_external_click_url: the last one', async () => {
    const team = uniqueTeamId()
    await insertSessionEvents(ch, team, [
      { event: '$autocapture', session: 's1', properties: { $external_click_url: 'https://example.com/1' } },
      { event: '$autocapture', session: 's1', properties: { $external_click_url: 'https://example.com/2' } },
    ])
    expect(
      await hogql(ch, team, "select $last_external_click_url from sessions where session_id = 's1'"),
    ).toEqual([['https://example.com/2']])
  })

  it('test_lcp: the first LCP value of any event, NULL without one', async () => {
    const team = uniqueTeamId()
    await insertSessionEvents(ch, team, [
      { event: '$pageview', session: 's1', properties: { $pathname: '/1' } },
      { event: '$web_vitals', session: 's2', properties: { $web_vitals_LCP_value: '2.0' } },
      { event: '$pageview', session: 's3', properties: { $web_vitals_LCP_value: '3.0' } },
      { event: '$web_vitals', session: 's4', properties: { $web_vitals_LCP_value: '4.1' } },
      { event: '$web_vitals', session: 's4', properties: { $web_vitals_LCP_value: '4.2' } },
    ])
    expect(await hogql(ch, team, 'select $vitals_lcp from sessions order by session_id')).toEqual([
      [null],
      ['2'],
      ['3'],
      ['4.1'],
    ])
  })

  it('test_can_use_v1_and_v2_fields: duration, end and exit url and pathname', async () => {
    const team = uniqueTeamId()
    await insertSessionEvents(ch, team, [
      {
        event: '$pageview',
        session: 's1',
        properties: { $current_url: 'https://example.com/pathname', $pathname: '/pathname' },
      },
    ])
    const rows = await hogql(
      ch,
      team,
      "select $session_duration, duration, $end_current_url, $exit_current_url, $end_pathname, $exit_pathname from sessions where session_id = 's1'",
    )
    expect(rows).toEqual([
      ['0', '0', 'https://example.com/pathname', 'https://example.com/pathname', '/pathname', '/pathname'],
    ])
  })

  it('test_event_sessions_where: a WHERE on events.session', async () => {
    const team = uniqueTeamId()
    await insertSessionEvents(ch, team, [
      {
        event: '$pageview',
        session: 's1',
        properties: { $current_url: 'https://example.com/pathname', $pathname: '/pathname' },
      },
    ])
    expect(
      await hogql(ch, team, "select count() from events where events.session.$entry_pathname = '/pathname'"),
    ).toEqual([['1']])
  })
})

describe('sessions', () => {
  it('takes entry values from the first event and end values from the last, across inserts and days', async () => {
    const team = uniqueTeamId()
    // the later event is inserted first: the order of inserts must not matter
    await insertSessionEvents(ch, team, [
      {
        event: '$pageview',
        distinctId: 'late',
        session: 's1',
        at: '2024-03-02 00:00:05',
        properties: { $current_url: 'https://x.io/end?q=1', utm_source: 'later' },
      },
    ])
    await insertSessionEvents(ch, team, [
      {
        event: '$pageview',
        distinctId: 'early',
        session: 's1',
        at: '2024-03-01 23:59:50',
        properties: {
          $current_url: 'https://x.io/start',
          utm_source: 'newsletter',
          utm_medium: 'email',
          $referring_domain: 'mail.example.com',
        },
      },
    ])
    const rows = await hogql(
      ch,
      team,
      `select distinct_id, $start_timestamp, $end_timestamp, $session_duration, $entry_current_url, $entry_pathname,
        $end_current_url, $end_pathname, $entry_utm_source, $entry_utm_medium, $entry_referring_domain, $pageview_count,
        $channel_type, $num_uniq_urls
      from sessions`,
    )
    expect(rows).toEqual([
      [
        'late',
        '2024-03-01 23:59:50.000000',
        '2024-03-02 00:00:05.000000',
        '15',
        'https://x.io/start',
        '/start',
        'https://x.io/end?q=1',
        '/end',
        'newsletter',
        'email',
        'mail.example.com',
        '2',
        // utm_medium email: the organic medium rule (no source or domain matched before it)
        'Email',
        '2',
      ],
    ])
  })

  it("reads only the project's own sessions", async () => {
    const [a, b] = [uniqueTeamId(), uniqueTeamId()]
    await insertSessionEvents(ch, a, [{ event: '$pageview', session: 'shared-id' }])
    await insertSessionEvents(ch, b, [
      { event: '$pageview', session: 'shared-id' },
      { event: '$pageview', session: 'shared-id' },
    ])
    expect(await hogql(ch, a, 'select session_id, $pageview_count from sessions')).toEqual([
      ['shared-id', '1'],
    ])
    expect(
      await hogql(ch, b, "select session.$pageview_count from events where $session_id = 'shared-id'"),
    ).toEqual([['2'], ['2']])
  })

  it('leaves events without a $session_id out of the sessions', async () => {
    const team = uniqueTeamId()
    await insertEvents0(team)
    expect(await hogql(ch, team, 'select count() from sessions')).toEqual([['0']])
  })
})

async function insertEvents0(team: number): Promise<void> {
  const { insertEvents } = await import('../hogql/fixtures.ts')
  await insertEvents(ch, [
    {
      team,
      uuid: '00000000-0000-4000-8000-00000000b001',
      event: '$pageview',
      distinctId: 'd',
      personId: '00000000-0000-4000-8000-000000000000',
      timestamp: '2024-01-01 00:00:00',
    },
  ])
}

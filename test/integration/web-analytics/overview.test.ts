// WebOverviewQuery on the real server, with the fixture and answers of PostHog's
// posthog/hogql_queries/web_analytics/test/test_web_overview.py (test_no_crash_when_no_data,
// test_increase_in_users), compiled by the registered kind and shaped as the API answers it.
import { describe, expect, it } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import { ValidationError } from '../../../src/http/errors.ts'
import { queryKind } from '../../../src/queries/kinds.ts'
import '../../../src/web-analytics/overview.ts'
import { clickhouse, uniqueTeamId } from '../../harness/index.ts'
import { insertSessionEvents } from '../sessions/helpers.ts'

const ch = clickhouse()

async function overview(team: number, dateFrom: string, dateTo: string, compare = true) {
  const kind = queryKind('WebOverviewQuery')
  const project = { id: team, timezone: 'UTC' } as Project
  const raw = {
    kind: 'WebOverviewQuery',
    dateRange: { date_from: dateFrom, date_to: dateTo },
    properties: [],
    compareFilter: { compare },
  }
  const compiled = await kind.compile(raw, project)
  const result = await ch.query({ query: compiled.clickhouse, format: 'JSONCompact' })
  const rows = ((await result.json()) as { data: unknown[][] }).data
  return kind.shape!(rows, compiled, raw, project) as { key: string; value: unknown; previous: unknown }[]
}

describe("PostHog's test_web_overview cases", () => {
  it('test_no_crash_when_no_data: five figures', async () => {
    const results = await overview(uniqueTeamId(), '2023-12-08', '2023-12-15')
    expect(results.map((r) => r.key)).toEqual([
      'visitors',
      'views',
      'sessions',
      'session duration',
      'bounce rate',
    ])
  })

  it('test_increase_in_users: this period against the previous one', async () => {
    const team = uniqueTeamId()
    const persons: Record<string, string> = {
      p1: '00000000-0000-4000-8000-00000000d001',
      p2: '00000000-0000-4000-8000-00000000d002',
    }
    const pv = (distinctId: string, day: string, session: string) => ({
      event: '$pageview',
      distinctId,
      personId: persons[distinctId],
      session,
      at: `${day} 00:00:00`,
    })
    await insertSessionEvents(ch, team, [
      pv('p1', '2023-12-02', 's1a'),
      pv('p1', '2023-12-03', 's1a'),
      pv('p1', '2023-12-12', 's1b'),
      pv('p2', '2023-12-11', 's2'),
    ])
    const results = await overview(team, '2023-12-08', '2023-12-15')
    expect(results).toEqual([
      // PostHog's expected visitors, views and sessions
      {
        key: 'visitors',
        kind: 'unit',
        isIncreaseBad: null,
        value: 2,
        previous: 1,
        changeFromPreviousPct: 100,
      },
      { key: 'views', kind: 'unit', isIncreaseBad: null, value: 2, previous: 2, changeFromPreviousPct: 0 },
      {
        key: 'sessions',
        kind: 'unit',
        isIncreaseBad: null,
        value: 2,
        previous: 1,
        changeFromPreviousPct: 100,
      },
      // worked out by hand: s1b and s2 have one event each (0 s), s1a lasted a day
      {
        key: 'session duration',
        kind: 'duration_s',
        isIncreaseBad: null,
        value: 0,
        previous: 86400,
        changeFromPreviousPct: -100,
      },
      // s1b and s2 bounced (one page view), s1a did not (two)
      {
        key: 'bounce rate',
        kind: 'percentage',
        isIncreaseBad: true,
        value: 100,
        previous: 0,
        changeFromPreviousPct: null,
      },
    ])
  })

  it('without compareFilter.compare: no previous values', async () => {
    const team = uniqueTeamId()
    await insertSessionEvents(ch, team, [{ event: '$pageview', session: 's', at: '2023-12-10 00:00:00' }])
    const results = await overview(team, '2023-12-08', '2023-12-15', false)
    expect(results.map((r) => [r.key, r.value, r.previous])).toEqual([
      ['visitors', 1, null],
      ['views', 1, null],
      ['sessions', 1, null],
      ['session duration', 0, null],
      ['bounce rate', 100, null],
    ])
  })

  it('refuses what it does not support with a 400', async () => {
    const kind = queryKind('WebOverviewQuery')
    const project = { id: uniqueTeamId(), timezone: 'UTC' } as Project
    await expect(
      kind.compile({ kind: 'WebOverviewQuery', conversionGoal: { actionId: 1 } }, project),
    ).rejects.toBeInstanceOf(ValidationError)
  })
})

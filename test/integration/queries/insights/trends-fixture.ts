/* eslint-disable @typescript-eslint/no-explicit-any -- loosely typed JSON responses */
// A small hand-built data set shared by the trends, lifecycle, stickiness and events tests.
// Project time zone: America/New_York (UTC-5 in January). Days below are New York days.
//
//   #   person (distinct id)   UTC time              New York day   event      properties
//   1   A (u1)                 2024-01-01 12:00      Jan 1          $pageview  Chrome
//   2   A (u1)                 2024-01-02 03:00      Jan 1 (22:00)  $pageview  Chrome
//   3   C (u3), merged into A  2024-01-01 18:00      Jan 1          $pageview  Firefox
//   4   B (u2)                 2024-01-02 16:00      Jan 2          $pageview  Safari
//   5   B (u2)                 2024-01-04 04:30      Jan 3 (23:30)  $pageview  Safari
//   6   A (u1)                 2024-01-05 12:00      Jan 5          $pageview  Chrome, amount 10
//   7   D (u4), personless     2024-01-05 13:00      Jan 5          $pageview  Edge, amount 30
//   8   B (u2)                 2024-01-08 04:59      Jan 7 (23:59)  $pageview  Safari
//   9   B (u2)                 2024-01-08 05:00      Jan 8 (00:00)  $pageview  Safari
//  10   A (u1)                 2024-01-01 04:00      Dec 31 (23:00) $pageview  Chrome
//  11   B (u2)                 2024-01-02 17:00      Jan 2          signup     plan pro
//  12   A (u1)                 2024-01-05 13:00      Jan 5          signup     (no plan)
//
// Persons: A created 2023-12-31 10:00 UTC (Dec 31 NY), email a@x.com; B created 2024-01-02 15:00
// UTC (Jan 2 NY), email b@y.com; C merged into A (override C → A). D has no person (sent with
// $process_person_profile: false). Another project has one $pageview on Jan 1 that must never count.
import { v4 as uuidv4 } from 'uuid'
import type { Project } from '../../../../src/accounts/documents.ts'
import type { RunningBurrow } from '../../../../src/runtime/start.ts'
import { api, clickhouse, createTestKey, createTestProject, startTestBurrow } from '../../../harness/index.ts'
import { insertEvents, insertOverrides, insertPersons } from '../../hogql/fixtures.ts'

export const A = '00000000-0000-4000-8000-00000000000a'
export const B = '00000000-0000-4000-8000-00000000000b'
export const C = '00000000-0000-4000-8000-00000000000c'
export const D = '00000000-0000-4000-8000-00000000000d'

export const LAST_PAGEVIEW_UUID = '00000000-0000-4000-8000-000000000909'

export interface InsightsFixture {
  burrow: RunningBurrow
  project: Project
  query: (query: Record<string, unknown>) => Promise<{ status: number; body: any }>
}

export async function setupInsightsFixture(name: string): Promise<InsightsFixture> {
  const burrow = await startTestBurrow()
  const project = await createTestProject(name, 'America/New_York')
  const other = await createTestProject(`${name} (other)`, 'America/New_York')
  const call = api(burrow.url, await createTestKey(['query:read'], [project.id]))
  const ch = clickhouse()
  const t = project.id
  const ev = (
    person: string,
    distinctId: string,
    event: string,
    timestamp: string,
    properties: Record<string, unknown> = {},
    uuid = uuidv4(),
  ) => ({ team: t, uuid, event, distinctId, personId: person, timestamp, properties })
  await insertEvents(ch, [
    ev(A, 'u1', '$pageview', '2024-01-01 12:00:00.000', { $browser: 'Chrome' }),
    ev(A, 'u1', '$pageview', '2024-01-02 03:00:00.000', { $browser: 'Chrome' }),
    ev(C, 'u3', '$pageview', '2024-01-01 18:00:00.000', { $browser: 'Firefox' }),
    ev(B, 'u2', '$pageview', '2024-01-02 16:00:00.000', { $browser: 'Safari' }),
    ev(B, 'u2', '$pageview', '2024-01-04 04:30:00.000', { $browser: 'Safari' }),
    ev(A, 'u1', '$pageview', '2024-01-05 12:00:00.000', { $browser: 'Chrome', amount: 10 }),
    ev(D, 'u4', '$pageview', '2024-01-05 13:00:00.000', {
      $browser: 'Edge',
      amount: 30,
      $process_person_profile: false,
    }),
    ev(B, 'u2', '$pageview', '2024-01-08 04:59:00.000', { $browser: 'Safari' }),
    ev(B, 'u2', '$pageview', '2024-01-08 05:00:00.000', { $browser: 'Safari' }, LAST_PAGEVIEW_UUID),
    ev(A, 'u1', '$pageview', '2024-01-01 04:00:00.000', { $browser: 'Chrome' }),
    ev(B, 'u2', 'signup', '2024-01-02 17:00:00.000', { plan: 'pro' }),
    ev(A, 'u1', 'signup', '2024-01-05 13:00:00.000', {}),
    { ...ev(A, 'x1', '$pageview', '2024-01-01 12:00:00.000', { $browser: 'Chrome' }), team: other.id },
  ])
  await insertPersons(ch, [
    { team: t, id: A, createdAt: '2023-12-31 10:00:00.000', properties: { email: 'a@x.com' }, version: 1 },
    { team: t, id: B, createdAt: '2024-01-02 15:00:00.000', properties: { email: 'b@y.com' }, version: 1 },
    { team: t, id: C, createdAt: '2024-01-01 17:00:00.000', properties: {}, version: 1 },
    { team: t, id: C, createdAt: '2024-01-01 17:00:00.000', properties: {}, version: 2, deleted: true },
  ])
  await insertOverrides(ch, [{ team: t, oldPersonId: C, overridePersonId: A, version: 1 }])
  return {
    burrow,
    project,
    query: (query) =>
      call('POST', `/api/projects/${project.id}/query/`, { query, refresh: 'force_blocking' }),
  }
}

/** Jan 1 – Jan 7 2024 as absolute dates: the range most tests chart. */
export const FIRST_WEEK = { date_from: '2024-01-01', date_to: '2024-01-07' }
export const FIRST_WEEK_DAYS = [
  '2024-01-01',
  '2024-01-02',
  '2024-01-03',
  '2024-01-04',
  '2024-01-05',
  '2024-01-06',
  '2024-01-07',
]

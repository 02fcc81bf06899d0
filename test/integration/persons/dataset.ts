// A small hand-built data set shared by the funnel, actors and person tests. Times are UTC; every
// expected answer in the tests is worked out by hand from these rows.
import { randomUUID } from 'node:crypto'
import type { ClickHouseClient } from '@clickhouse/client'
import { insertDistinctIds, insertEvents, insertOverrides, insertPersons } from '../hogql/fixtures.ts'

export const P = {
  A: '0000000a-0000-4000-8000-000000000000',
  B: '0000000b-0000-4000-8000-000000000000',
  C: '0000000c-0000-4000-8000-000000000000',
  D: '0000000d-0000-4000-8000-000000000000',
  E: '0000000e-0000-4000-8000-000000000000',
  F: '0000000f-0000-4000-8000-000000000000',
  OLD_F: '000000f0-0000-4000-8000-000000000000',
  // personless: events only, no person row
  PL1: '00000001-0000-4000-8000-000000000001',
} as const

const DIST: Record<string, string> = {
  [P.A]: 'alice',
  [P.B]: 'bob',
  [P.C]: 'carol',
  [P.D]: 'dave',
  [P.E]: 'erin',
  [P.F]: 'frank',
  [P.OLD_F]: 'frank-anon',
  [P.PL1]: 'anon1',
}

export async function insertFunnelDataset(ch: ClickHouseClient, team: number): Promise<void> {
  const ev = (person: string, event: string, ts: string, properties: Record<string, unknown> = {}) => ({
    team,
    uuid: randomUUID(),
    event,
    distinctId: DIST[person]!,
    personId: person,
    timestamp: `2024-03-${ts}`,
    properties,
  })
  await insertEvents(ch, [
    ev(P.A, 'signup', '01 10:00:00', { plan: 'pro' }),
    ev(P.A, 'activate', '01 10:10:00'),
    ev(P.A, 'pay', '01 10:40:00'),
    ev(P.B, 'signup', '01 10:00:00', { plan: 'free' }),
    ev(P.B, '$pageview', '01 10:01:00'),
    ev(P.B, 'activate', '01 10:05:00'),
    ev(P.C, 'activate', '01 09:00:00'),
    ev(P.C, 'signup', '01 10:00:00', { plan: 'pro' }),
    ev(P.C, 'pay', '01 10:30:00'),
    ev(P.D, 'signup', '01 10:00:00', { plan: 'free' }),
    ev(P.D, 'activate', '03 11:00:00'),
    ev(P.E, 'signup', '01 10:00:00', { plan: 'pro' }),
    ev(P.E, 'cancel', '01 10:02:00'),
    ev(P.E, 'activate', '01 10:05:00'),
    ev(P.E, 'pay', '01 10:06:00'),
    ev(P.OLD_F, 'signup', '01 10:00:00', { plan: 'pro' }),
    ev(P.F, 'activate', '01 10:20:00'),
    ev(P.PL1, 'signup', '01 10:00:00', { plan: 'free' }),
  ])
  const persons = [P.A, P.B, P.C, P.D, P.E, P.F]
  await insertPersons(
    ch,
    persons.map((id, i) => ({
      team,
      id,
      createdAt: `2024-02-0${i + 1} 08:00:00.250`,
      properties: { email: `${DIST[id]}@example.com`, rank: i + 1, plan: i % 2 ? 'free' : 'pro' },
      version: 1,
      identified: true,
    })),
  )
  await insertDistinctIds(ch, [
    ...persons.map((id) => ({ team, distinctId: DIST[id]!, personId: id, version: 1 })),
    { team, distinctId: 'frank-anon', personId: P.F, version: 2 },
  ])
  await insertOverrides(ch, [{ team, oldPersonId: P.OLD_F, overridePersonId: P.F, version: 1 }])
}

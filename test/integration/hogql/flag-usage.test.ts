// The feature_flag_usage virtual table: HogQL over the 0005 view, run against the real ClickHouse with
// events written here by hand. The expected counts are worked out from the rows below.
import { beforeAll, describe, expect, it } from 'vitest'
import { compileHogQL } from '../../../src/hogql/index.ts'
import { clickhouse, uniqueTeamId } from '../../harness/index.ts'
import { type EventRow, insertEvents, insertOverrides } from './fixtures.ts'

const ch = clickhouse()
const A = uniqueTeamId()
const B = A + 1

const P1 = '00000000-0000-4000-8000-00000000f001'
const P2 = '00000000-0000-4000-8000-00000000f002'
const P3 = '00000000-0000-4000-8000-00000000f003' // merged into P1
const PB = '00000000-0000-4000-8000-00000000f0b1'
let n = 0
const uuid = () => `00000000-0000-7000-8000-${(++n).toString().padStart(12, '0')}`

const called = (
  team: number,
  personId: string,
  timestamp: string,
  flag: string,
  response: unknown,
): EventRow => ({
  team,
  uuid: uuid(),
  event: '$feature_flag_called',
  distinctId: personId,
  personId,
  timestamp,
  properties: { $feature_flag: flag, $feature_flag_response: response },
})
const pageview = (personId: string, timestamp: string, properties: Record<string, unknown>): EventRow => ({
  team: A,
  uuid: uuid(),
  event: '$pageview',
  distinctId: personId,
  personId,
  timestamp,
  properties,
})

async function run(hogql: string, teamId = A): Promise<unknown[][]> {
  const compiled = await compileHogQL(hogql, { teamId })
  const result = await ch.query({ query: compiled.clickhouse, format: 'JSONCompact' })
  const json = (await result.json()) as { data: unknown[][] }
  // 64-bit integers come back quoted
  return json.data.map((row) =>
    row.map((v, i) => (/^U?Int64$/.test(compiled.types[i] ?? '') && typeof v === 'string' ? Number(v) : v)),
  )
}

beforeAll(async () => {
  await insertOverrides(ch, [{ team: A, oldPersonId: P3, overridePersonId: P1, version: 1 }])
  await insertEvents(ch, [
    called(A, P1, '2024-03-01 10:00:00.000', 'beta', true),
    called(A, P2, '2024-03-01 11:00:00.000', 'beta', true),
    called(A, P3, '2024-03-01 12:00:00.000', 'beta', true),
    called(A, P1, '2024-03-01 13:00:00.000', 'beta', true),
    called(A, P2, '2024-03-01 14:00:00.000', 'beta', false),
    called(A, P1, '2024-03-02 09:00:00.000', 'exp', 'test'),
    called(A, P2, '2024-03-02 09:30:00.000', 'exp', 'control'),
    pageview(P1, '2024-03-02 10:00:00.000', { '$feature/exp': 'test', '$feature/beta': true }),
    pageview(P3, '2024-03-02 10:05:00.000', { '$feature/exp': 'test' }),
    pageview(P2, '2024-03-02 11:00:00.000', { $browser: 'Chrome' }),
    // Another project using the same flag names.
    ...[10, 11, 12, 13, 14].map((h) => called(B, PB, `2024-03-01 ${h}:00:00.000`, 'beta', true)),
  ])
})

describe('feature_flag_usage', () => {
  it('returns calls and unique persons per flag, variant, day and source', async () => {
    const rows = await run(
      `SELECT source, flag, variant, day, calls, unique_persons FROM feature_flag_usage
       ORDER BY source, flag, day, variant`,
    )
    expect(rows).toEqual([
      // P3 was merged into P1: four calls by two persons
      ['called', 'beta', 'false', '2024-03-01', 1, 1],
      ['called', 'beta', 'true', '2024-03-01', 4, 2],
      ['called', 'exp', 'control', '2024-03-02', 1, 1],
      ['called', 'exp', 'test', '2024-03-02', 1, 1],
      ['property', 'beta', 'true', '2024-03-02', 1, 1],
      ['property', 'exp', 'test', '2024-03-02', 2, 1],
    ])
  })

  it('expands * to the view columns in order', async () => {
    const compiled = await compileHogQL('SELECT * FROM feature_flag_usage', { teamId: A })
    expect(compiled.columns).toEqual(['flag', 'variant', 'day', 'source', 'calls', 'unique_persons'])
    expect(compiled.types).toEqual(['String', 'String', 'Date', 'String', 'UInt64', 'UInt64'])
    expect(await run('SELECT * FROM feature_flag_usage')).toHaveLength(6)
  })

  it('filters by day and aggregates', async () => {
    expect(
      await run(
        `SELECT flag, sum(calls) AS calls FROM feature_flag_usage
         WHERE day = '2024-03-01' AND source = 'called' GROUP BY flag ORDER BY flag`,
      ),
    ).toEqual([['beta', 5]])
    expect(
      await run(
        `SELECT flag, sum(calls) FROM feature_flag_usage
         WHERE day >= toDate('2024-03-02') GROUP BY flag ORDER BY flag`,
      ),
    ).toEqual([
      ['beta', 1],
      ['exp', 4],
    ])
  })

  // Conditions on day and source are evaluated inside each source's read (flag-usage.ts), once with
  // source = 'called' and once with 'property': OR, NOT and != must keep exactly the rows they keep
  // when applied to the finished table.
  it('filters by source and day through OR, NOT and !=', async () => {
    expect(
      await run(
        `SELECT flag, sum(calls), sum(unique_persons) FROM feature_flag_usage
         WHERE source = 'property' GROUP BY flag ORDER BY flag`,
      ),
    ).toEqual([
      ['beta', 1, 1],
      ['exp', 2, 1],
    ])
    // every call (beta 5, exp 2) and the properties of 03-02 (beta 1, exp 2)
    expect(
      await run(
        `SELECT flag, sum(calls) FROM feature_flag_usage
         WHERE source = 'called' OR day > '2024-03-01' GROUP BY flag ORDER BY flag`,
      ),
    ).toEqual([
      ['beta', 6],
      ['exp', 4],
    ])
    expect(
      await run(
        `SELECT source, sum(calls) FROM feature_flag_usage
         WHERE NOT (source = 'property') AND day != '2024-03-01' GROUP BY source ORDER BY source`,
      ),
    ).toEqual([['called', 2]])
    expect(
      await run(`SELECT count() FROM feature_flag_usage WHERE source != 'called' AND day < '2024-03-02'`),
    ).toEqual([[0]])
  })

  it('never shows another project its rows, as the first table or joined', async () => {
    expect(
      await run('SELECT source, flag, variant, day, calls, unique_persons FROM feature_flag_usage', B),
    ).toEqual([['called', 'beta', 'true', '2024-03-01', 5, 1]])
    // The view on the right of a join is printed as its own guarded subquery.
    expect(
      await run(
        `SELECT u.variant, u.calls FROM (SELECT 'beta' AS name) AS f
         JOIN feature_flag_usage AS u ON u.flag = f.name WHERE u.source = 'called' ORDER BY u.variant`,
      ),
    ).toEqual([
      ['false', 1],
      ['true', 4],
    ])
    expect(await run(`SELECT count() FROM feature_flag_usage WHERE flag = 'beta'`, A + 2)).toEqual([[0]])
  })
})

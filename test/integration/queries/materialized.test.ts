import { v4 as uuidv4 } from 'uuid'
import { beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import { setMaterializedProperties } from '../../../src/hogql/materialized.ts'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import { columnFor, loadMaterialized, materializeProperty } from '../../../src/clickhouse/materialize.ts'
import { TableAdmin } from '../../../src/clickhouse/table-admin.ts'
import { api, clickhouse, createTestKey, createTestProject, startTestBurrow } from '../../harness/index.ts'
import { insertEvents } from '../hogql/fixtures.ts'
import { hotProperties } from '../../../src/queries/hot-properties.ts'

let burrow: RunningBurrow
let project: Project
let call: ReturnType<typeof api>
// a property name of this file's own, so materializing it does not change other files' SQL
const PROP = `$browser_${Math.floor(Math.random() * 1e9)}`

const event = (value: string | null, ts: string) => ({
  team: project.id,
  uuid: uuidv4(),
  event: '$pageview',
  distinctId: 'd',
  personId: uuidv4(),
  timestamp: ts,
  properties: value === null ? {} : { [PROP]: value },
})

beforeAll(async () => {
  burrow = await startTestBurrow()
  project = await createTestProject('materialized')
  call = api(burrow.url, await createTestKey(['query:read'], [project.id]))
  await insertEvents(clickhouse(), [
    event('Chrome', '2026-03-01 10:00:00.000'),
    event('Chrome', '2026-03-01 11:00:00.000'),
    event('Safari', '2026-04-01 10:00:00.000'),
    event(null, '2026-04-02 10:00:00.000'),
  ])
})

const run = (text: string) =>
  call('POST', `/api/projects/${project.id}/query/`, {
    query: { kind: 'HogQLQuery', query: text },
    refresh: 'force_blocking',
  })

describe('materialized property columns', () => {
  it('reads a materialized property from its column, with the same answers, old and new rows alike', async () => {
    const text = `SELECT properties.${PROP} AS b, count() FROM events GROUP BY b ORDER BY b`
    const before = await run(text)
    expect(before.body.results).toEqual([
      ['Chrome', 2],
      ['Safari', 1],
      [null, 1],
    ])
    expect(before.body.clickhouse).toContain('JSONExtract(')

    const column = await materializeProperty(clickhouse(), TableAdmin.single(clickhouse()), PROP)
    expect(column).toBe(columnFor(PROP))
    const map = await loadMaterialized(clickhouse())
    expect(map.get(PROP)).toBe(column)
    setMaterializedProperties(map)

    const after = await run(text)
    expect(after.body.clickhouse).toContain(column)
    expect(after.body.clickhouse).not.toContain('JSONExtract(')
    expect(after.body.results).toEqual(before.body.results)

    // rows written after the column exists are computed on insert
    await insertEvents(clickhouse(), [event('Safari', '2026-04-03 10:00:00.000')])
    const filtered = await run(`SELECT count() FROM events WHERE properties.${PROP} = 'Safari'`)
    expect(filtered.body.results).toEqual([[2]])

    // materializing again is a no-op
    expect(await materializeProperty(clickhouse(), TableAdmin.single(clickhouse()), PROP)).toBe(column)
  })

  // Auto-materialization (src/queries/hot-properties.ts): a Burrow whose period is short and whose
  // threshold is any time at all gives the properties its queries read a column, insights included.
  it('materializes the properties queries spend time on, then reads them from the column', async () => {
    const hot = `${PROP}_hot`
    const other = `${PROP}_cold`
    await insertEvents(clickhouse(), [
      { ...event('Chrome', '2026-05-01 10:00:00.000'), properties: { [hot]: 'Chrome', [other]: 'x' } },
      { ...event('Chrome', '2026-05-01 11:00:00.000'), properties: { [hot]: 'Chrome' } },
      { ...event('Opera', '2026-05-02 10:00:00.000'), properties: { [hot]: 'Opera' } },
    ])
    // an empty tally to start from: the lane's earlier files ran in this process and their queries
    // were counted too, enough to fill the column cap with their properties before this one's
    hotProperties.take(0)
    const auto = await startTestBurrow({
      AUTO_MATERIALIZE_INTERVAL_SECONDS: '0.3',
      AUTO_MATERIALIZE_MIN_SECONDS: '0',
    })
    try {
      const q = api(auto.url, await createTestKey(['query:read'], [project.id]))
      const trends = () =>
        q('POST', `/api/projects/${project.id}/query/`, {
          query: {
            kind: 'TrendsQuery',
            series: [{ kind: 'EventsNode', event: '$pageview', math: 'total' }],
            dateRange: { date_from: '2026-05-01', date_to: '2026-05-02' },
            breakdownFilter: { breakdown: hot },
          },
          refresh: 'force_blocking',
        })
      const before = await trends()
      expect(before.status).toBe(200)
      const series = (r: typeof before) =>
        r.body.results.map((s: { breakdown_value: string; data: number[] }) => [s.breakdown_value, s.data])
      expect(series(before)).toEqual([
        ['Chrome', [2, 0]],
        ['Opera', [0, 1]],
      ])
      expect(before.body.clickhouse).not.toContain(columnFor(hot))
      let after = before
      for (let i = 0; i < 300 && !after.body.clickhouse.includes(columnFor(hot)); i++) {
        await new Promise((r) => setTimeout(r, 100))
        after = await trends()
      }
      expect(after.body.clickhouse).toContain(columnFor(hot))
      expect(series(after)).toEqual(series(before))
      // a property no query read gets nothing
      expect((await loadMaterialized(clickhouse())).has(other)).toBe(false)
    } finally {
      await auto.stop()
    }
  })

  // A property compared with a number is read as a number, with a boolean as its stored text
  // (PostHog's property comparisons): the same when the property has a column of its own.
  it('compares a materialized property with numbers and booleans as it compares the arrays', async () => {
    const num = `${PROP}_n`
    const flag = `${PROP}_b`
    await insertEvents(clickhouse(), [
      { ...event(null, '2026-06-01 10:00:00.000'), properties: { [num]: 5, [flag]: true } },
      { ...event(null, '2026-06-01 11:00:00.000'), properties: { [num]: 7, [flag]: false } },
      { ...event(null, '2026-06-01 12:00:00.000'), properties: { [num]: 'x' } },
    ])
    const texts = [
      `SELECT count() FROM events WHERE properties.${num} = 5`,
      `SELECT count() FROM events WHERE properties.${num} > 6`,
      `SELECT count() FROM events WHERE properties.${num} IN (5, 7)`,
      `SELECT count() FROM events WHERE properties.${flag} = true`,
      `SELECT count() FROM events WHERE 7 = properties.${num}`,
    ]
    const expected = [[[1]], [[1]], [[2]], [[1]], [[1]]]
    for (const [i, t] of texts.entries()) expect((await run(t)).body.results).toEqual(expected[i])
    const map = new Map(await loadMaterialized(clickhouse()))
    for (const p of [num, flag])
      map.set(p, await materializeProperty(clickhouse(), TableAdmin.single(clickhouse()), p))
    setMaterializedProperties(map)
    for (const [i, t] of texts.entries()) {
      const r = await run(t)
      expect(r.status).toBe(200)
      expect(r.body.clickhouse).toContain(columnFor(t.includes(flag) ? flag : num))
      expect(r.body.results).toEqual(expected[i])
    }
  })

  it('refuses names that are not a top-level property', async () => {
    await expect(materializeProperty(clickhouse(), TableAdmin.single(clickhouse()), '')).rejects.toThrow(
      /property/,
    )
    await expect(
      materializeProperty(clickhouse(), TableAdmin.single(clickhouse()), 'a\x1Fb'),
    ).rejects.toThrow(/property/)
  })
})

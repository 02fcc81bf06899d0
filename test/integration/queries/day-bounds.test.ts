// The sort-key bounds the guard derives from time bounds (src/hogql/guard.ts dayKeyBounds,
// timestampBoundsOfDay) never change an answer: on the real server, each query counts the same
// events with and without them, over events placed one second either side of day boundaries in
// UTC and in the zones compared (and across a DST change and a month change).
import { v4 as uuidv4 } from 'uuid'
import { beforeAll, describe, expect, it } from 'vitest'
import type { ClickHouseClient } from '@clickhouse/client'
import { compileHogQL } from '../../../src/hogql/index.ts'
import { dayKeyBounds, timestampBoundsOfDay } from '../../../src/hogql/guard.ts'
import { clickhouse, uniqueTeamId } from '../../harness/index.ts'
import { insertEvents } from '../hogql/fixtures.ts'

const TEAM = uniqueTeamId()
let ch: ClickHouseClient

const DAYS = ['2026-01-31', '2026-02-01', '2026-03-08', '2026-03-09', '2026-03-29', '2026-11-01']
// UTC midnight, New York midnight (EST, EDT), Kolkata midnight (18:30 the day before), late
// evening, and the hours around New York's DST changes (06:00/07:00 UTC on 2026-03-08 and 11-01)
const TIMES = ['00:00:00', '04:00:00', '05:00:00', '06:00:00', '06:30:00', '07:00:00', '18:30:00', '23:59:59']
const instants: number[] = []
for (const d of DAYS)
  for (const t of TIMES) for (const s of [-1, 0, 1]) instants.push(Date.parse(`${d}T${t}Z`) + s * 1000)

const at = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '')

beforeAll(async () => {
  ch = clickhouse()
  await insertEvents(
    ch,
    instants.map((ms) => ({
      team: TEAM,
      uuid: uuidv4(),
      event: 'e',
      distinctId: 'd',
      personId: uuidv4(),
      timestamp: at(ms),
    })),
  )
})

async function count(sql: string): Promise<number> {
  const rs = await ch.query({ query: sql, format: 'JSONEachRow' })
  const rows = (await rs.json()) as Record<string, unknown>[]
  return Number(Object.values(rows[0]!)[0])
}

const OPS = ['>=', '>', '<=', '<', '='] as const
const ZONES = ['UTC', 'America/New_York', 'Asia/Kolkata']
const BOUNDS = [
  '2026-02-01',
  '2026-03-08 00:00:00',
  '2026-03-08 04:59:59',
  // in New York: a time that does not exist (spring forward) and one that happens twice
  '2026-03-08 02:30:00',
  '2026-11-01 01:30:00',
  '2026-03-09 05:00:00',
  '2026-11-01 00:00:01',
]

describe('timestamp bounds imply key bounds (dayKeyBounds), as the printer pushes them', () => {
  const cases = ZONES.flatMap((zone) => OPS.flatMap((op) => BOUNDS.map((b) => [zone, op, b] as const)))
  it.each(cases)('%s: timestamp %s %s', async (zone, op, b) => {
    const compiled = await compileHogQL(`select count() from events where timestamp ${op} '${b}'`, {
      teamId: TEAM,
      timezone: zone,
    })
    const sql = compiled.clickhouse
    const pushed = /PREWHERE team_id = \d+ AND (\(`timestamp`.*?\)) AND toDate/.exec(sql)
    expect(pushed, sql).not.toBeNull()
    const derived = dayKeyBounds('events', [pushed![1]!])
    expect(derived).toHaveLength(1)
    const without = sql.replace(` AND ${derived[0]}`, '')
    expect(without).not.toContain('toDate(`timestamp`)')
    const n = await count(sql)
    expect(n).toBe(await count(without))
    if (zone === 'UTC') {
      // the oracle: the events placed above, compared in JavaScript
      const t = Date.parse(`${b.length === 10 ? `${b} 00:00:00` : b}Z`.replace(' ', 'T'))
      const cmp = {
        '>=': (x: number) => x >= t,
        '>': (x: number) => x > t,
        '<=': (x: number) => x <= t,
        '<': (x: number) => x < t,
        '=': (x: number) => x === t,
      }[op]
      expect(n).toBe(instants.filter(cmp).length)
    }
  })
})

describe('day bounds imply timestamp bounds (timestampBoundsOfDay)', () => {
  const conds: string[] = []
  for (const zone of ZONES) {
    const col = zone === 'UTC' ? '`timestamp`' : `toTimeZone(\`timestamp\`, '${zone}')`
    for (const op of OPS) {
      for (const d of ['2026-02-01', '2026-03-08', '2026-11-01']) {
        conds.push(`toDate(${col}) ${op} toDate('${d}')`)
        conds.push(`'${d}' ${op} toDate(${col})`)
      }
      for (const b of BOUNDS) {
        conds.push(`toStartOfDay(${col}) ${op} parseDateTimeBestEffort('${b}', '${zone}')`)
        conds.push(`toStartOfDay(${col}) ${op} parseDateTimeBestEffort('${b}', 'UTC')`)
        conds.push(`toStartOfHour(${col}) ${op} parseDateTimeBestEffort('${b}', '${zone}')`)
        conds.push(`toStartOfFifteenMinutes(${col}) ${op} parseDateTimeBestEffort('${b}', 'UTC')`)
        {
          conds.push(
            `toStartOfInterval(${col}, toIntervalDay(3)) ${op} parseDateTimeBestEffort('${b}', '${zone}')`,
          )
          conds.push(
            `toStartOfInterval(${col}, toIntervalHour(2)) ${op} parseDateTimeBestEffort('${b}', '${zone}')`,
          )
        }
      }
    }
  }
  // Both counts of every condition come from a few scans (countIf per condition, batches of 60)
  // instead of two queries each: a row the derived bounds would drop counts in the first and not
  // in the second, exactly as PREWHERE would drop it (PREWHERE filters as WHERE does; the key
  // only skips granules no row of which passes).
  const counts = new Map<string, { plain: number; guarded: number }>()
  beforeAll(async () => {
    for (let at = 0; at < conds.length; at += 60) {
      const batch = conds.slice(at, at + 60)
      const cols = batch.flatMap((cond, i) => {
        const derived = timestampBoundsOfDay('events', cond)
        return [`countIf(${cond}) AS p${i}`, `countIf(${[cond, ...derived].join(' AND ')}) AS g${i}`]
      })
      const rs = await ch.query({
        query: `SELECT ${cols.join(', ')} FROM events WHERE team_id = ${TEAM}`,
        format: 'JSONEachRow',
      })
      const [row] = (await rs.json()) as Record<string, unknown>[]
      batch.forEach((cond, i) =>
        counts.set(cond, { plain: Number(row![`p${i}`]), guarded: Number(row![`g${i}`]) }),
      )
    }
  })
  it.each(conds)('%s', (cond) => {
    expect(timestampBoundsOfDay('events', cond).length).toBeGreaterThan(0)
    const c = counts.get(cond)!
    expect(c.guarded).toBe(c.plain)
  })
})

// A differential check of the funnel SQL, for changes that must not change an answer: generates
// random histories (few event names, few seconds apart, many events sharing a second, a breakdown
// property) on a ClickHouse server, runs every variant of order, window, exclusion and breakdown
// attribution through the persons SQL of two trees, and prints each variant whose rows differ.
//   BASE=/work/main CLICKHOUSE_URL=http://127.0.0.1:8123 npx tsx bench/funnel-diff.ts
// (BASE: the tree to compare with; ROOT: the tree under test, default this one. PERSONS sizes it.)
// Exits 1 when any variant differs.
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createClient } from '@clickhouse/client'

type Sql = typeof import('../src/queries/insights/funnels/sql.ts')
const here = resolve(join(fileURLToPath(import.meta.url), '../..'))
const load = async (root: string) => (await import(join(root, 'src/queries/insights/funnels/sql.ts'))) as Sql
const base = await load(resolve(process.env.BASE ?? '/work/main'))
const mine = await load(resolve(process.env.ROOT ?? here))
const url = process.env.CLICKHOUSE_URL
if (!url) throw new Error('CLICKHOUSE_URL is required')
const ch = createClient({ url, request_timeout: 300_000 })
const PERSONS = Number(process.env.PERSONS ?? 400)
const table = 'funnel_diff_events'

await ch.command({ query: `DROP TABLE IF EXISTS ${table}` })
await ch.command({
  query: `CREATE TABLE ${table} (person_id String, timestamp DateTime, event String, prop String)
    ENGINE = MergeTree ORDER BY (person_id, timestamp)`,
})
// 5 to 40 events a person over ~2 hours, seconds drawn from a small set so that many share one
await ch.command({
  query: `INSERT INTO ${table}
    SELECT concat('p', toString(p)), toDateTime(1790000000 + (cityHash64(p, i, 1) % 40) * 180 + cityHash64(p, i, 2) % 3),
      ['a', 'b', 'c', 'd', 'x'][1 + cityHash64(p, i, 3) % 5], ['red', 'blue', ''][1 + cityHash64(p, i, 4) % 3]
    FROM (SELECT number AS p, arrayJoin(range(toUInt32(5 + cityHash64(number) % 36))) AS i
          FROM system.numbers LIMIT ${PERSONS})`,
})

type Filter = Record<string, unknown>
function variants(): { name: string; q: Filter }[] {
  const out: { name: string; q: Filter }[] = []
  const stepSets = [
    ['a', 'b'],
    ['a', 'b', 'c'],
    ['a', 'b', 'a', 'c'],
    ['b', 'b', 'b'],
  ]
  const windows = [{ funnelWindowInterval: 10, funnelWindowIntervalUnit: 'minute' }, {}]
  const excluded = (from: number, to: number) => ({
    kind: 'EventsNode',
    event: 'x',
    funnelFromStep: from,
    funnelToStep: to,
  })
  const breakdowns: Filter[] = [
    {},
    { breakdownFilter: { breakdown: 'prop', breakdown_type: 'hogql' } },
    { breakdownFilter: { breakdown: 'prop', breakdown_type: 'hogql' }, attr: 'last_touch' },
    { breakdownFilter: { breakdown: 'prop', breakdown_type: 'hogql' }, attr: 'all_events' },
    { breakdownFilter: { breakdown: 'prop', breakdown_type: 'hogql' }, attr: 'step', value: 1 },
  ]
  for (const steps of stepSets)
    for (const order of ['ordered', 'strict', 'unordered'])
      for (const w of windows)
        for (const ex of [
          [],
          [excluded(0, 1)],
          ...(steps.length > 2 ? [[excluded(1, 2)], [excluded(0, 2)]] : []),
        ])
          for (const b of breakdowns) {
            if (order === 'unordered' && b.attr === 'step') continue
            const { attr, value, ...rest } = b
            out.push({
              name: `${steps.join('>')} ${order} ${JSON.stringify(w)} excl=${ex.length} ${attr ?? (rest.breakdownFilter ? 'first_touch' : '-')}`,
              q: {
                kind: 'FunnelsQuery',
                series: steps.map((event) => ({ kind: 'EventsNode', event })),
                funnelsFilter: {
                  ...w,
                  funnelOrderType: order,
                  exclusions: ex,
                  ...(attr ? { breakdownAttributionType: attr, breakdownAttributionValue: value ?? 0 } : {}),
                },
                ...rest,
              },
            })
          }
  return out
}

// The events level as the compiled HogQL would give it, over this table's columns.
function eventsSql(sql: Sql, plan: ReturnType<Sql['planFunnel']>): string {
  return sql.eventsHogQL(plan, '1').replace('FROM events', `FROM ${table}`)
}

async function rows(sql: Sql, q: Filter): Promise<string[]> {
  const plan = sql.planFunnel(q as never)
  const query = `SELECT * FROM (${sql.personsSQL(plan, eventsSql(sql, plan))})`
  const text = await (await ch.query({ query, format: 'TabSeparated' })).text()
  return text.split('\n').filter(Boolean).sort()
}

let differing = 0
const all = variants()
for (const v of all) {
  const [a, b] = await Promise.all([rows(base, v.q), rows(mine, v.q)])
  const same = a.length === b.length && a.every((r, i) => r === b[i])
  if (!same) {
    differing++
    const onlyA = a.filter((r) => !b.includes(r)).slice(0, 3)
    const onlyB = b.filter((r) => !a.includes(r)).slice(0, 3)
    console.log(
      `DIFFERS ${v.name}: ${a.length} vs ${b.length} rows\n  base: ${onlyA.join('\n        ')}\n  mine: ${onlyB.join('\n        ')}`,
    )
  }
}
console.log(`${all.length} variants over ${PERSONS} persons: ${differing} differ`)
await ch.command({ query: `DROP TABLE ${table}` })
await ch.close()
process.exit(differing ? 1 : 0)

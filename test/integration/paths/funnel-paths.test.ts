// Funnel paths (PathsQuery with funnelPathsFilter) on PostHog's cases of
// ee/clickhouse/queries/test/test_paths.py (test_path_by_funnel_*): the data of
// _create_sample_data_multiple_dropoffs, a three-step funnel with a 7-day window, and the edges and
// edge persons PostHog asserts. (PostHog's HogQL runner kept these cases only as placeholders.)
import { beforeAll, describe, expect, it } from 'vitest'
import { type Ev, link, ONE_MINUTE, projectWith, startPathsBurrow } from './helpers.ts'

beforeAll(startPathsBurrow)

const custom = (person: string, event: string, ts: string): Ev => ({ person, event, ts })

/** PostHog's _create_sample_data_multiple_dropoffs; `day` spreads the steps a day apart. */
function dropoffData(dayApart = false): Ev[] {
  const events: Ev[] = []
  const t = (minute: string, k: number) =>
    dayApart ? `2021-05-0${k + 1} 00:00:00` : `2021-05-01 00:${minute}`
  const seq = (person: string, steps: [string, string][]) =>
    steps.forEach(([event, minute], k) => events.push(custom(person, event, t(minute, k))))
  for (let i = 0; i < 5; i++) {
    seq(`user_${i}`, [
      ['step one', '00:00'],
      ['between_step_1_a', '01:00'],
      ['between_step_1_b', '02:00'],
      ['between_step_1_c', '03:00'],
      ['step two', '04:00'],
      ['step three', '05:00'],
    ])
  }
  if (!dayApart) {
    for (let i = 5; i < 15; i++) {
      seq(`user_${i}`, [
        ['step one', '00:00'],
        ['between_step_1_a', '01:00'],
        ['between_step_1_b', '02:00'],
        ['step two', '03:00'],
        ['between_step_2_a', '04:20'],
        ['between_step_2_b', '05:40'],
      ])
    }
  }
  for (let i = 15; i < 35; i++) {
    const steps: [string, string][] = [
      ['step one', '00:00'],
      ['step dropoff1', '01:00'],
      ['step dropoff2', '02:00'],
    ]
    if (i % 2 === 0) steps.push(['step branch', '03:00'])
    seq(`user_${i}`, steps)
  }
  return events
}

const dateRange = { date_from: '2021-05-01 00:00:00', date_to: '2021-05-07 00:00:00' }
const funnelSource = {
  kind: 'FunnelsQuery',
  series: ['step one', 'step two', 'step three'].map((event) => ({ kind: 'EventsNode', event })),
  dateRange,
  funnelsFilter: { funnelWindowInterval: 7, funnelWindowIntervalUnit: 'day' },
}
const query = (funnelPathType: string, funnelStep: number) => ({
  dateRange,
  pathsFilter: {},
  funnelPathsFilter: { funnelPathType, funnelStep, funnelSource },
})

describe('funnel paths', () => {
  let ctx: Awaited<ReturnType<typeof projectWith>>
  beforeAll(async () => {
    ctx = await projectWith('funnel paths', dropoffData())
  })
  const count = async (q: Record<string, unknown>, pathStartKey: string, pathEndKey: string) =>
    (await ctx.people(q, { pathStartKey, pathEndKey })).length

  it('after the drop-off before step 2 (test_path_by_funnel_after_dropoff)', async () => {
    const q = query('funnel_path_after_step', -2)
    expect(await ctx.run(q)).toEqual([
      link('1_step one', '2_step dropoff1', 20, ONE_MINUTE),
      link('2_step dropoff1', '3_step dropoff2', 20, ONE_MINUTE),
      link('3_step dropoff2', '4_step branch', 10, ONE_MINUTE),
    ])
    expect(await count(q, '1_step one', '2_step dropoff1')).toBe(20)
    expect(await count(q, '2_step dropoff1', '3_step dropoff2')).toBe(20)
    expect(await count(q, '3_step dropoff2', '4_step branch')).toBe(10)
    expect(await count(q, '4_step branch', '3_step dropoff2')).toBe(0)
  })

  it('after step 2 (test_path_by_funnel_after_step)', async () => {
    expect(await ctx.run(query('funnel_path_after_step', 2))).toEqual([
      link('1_step two', '2_between_step_2_a', 10, 80_000),
      link('2_between_step_2_a', '3_between_step_2_b', 10, 80_000),
      link('1_step two', '2_step three', 5, ONE_MINUTE),
    ])
  })

  it('before the drop-off before step 3 (test_path_by_funneL_before_dropoff)', async () => {
    expect(await ctx.run(query('funnel_path_before_step', -3))).toEqual([
      link('1_step one', '2_between_step_1_a', 10, ONE_MINUTE),
      link('2_between_step_1_a', '3_between_step_1_b', 10, ONE_MINUTE),
      link('3_between_step_1_b', '4_step two', 10, ONE_MINUTE),
      link('4_step two', '5_between_step_2_a', 10, 80_000),
    ])
  })

  const upToStepTwo = [
    link('1_step one', '2_between_step_1_a', 15, ONE_MINUTE),
    link('2_between_step_1_a', '3_between_step_1_b', 15, ONE_MINUTE),
    link('3_between_step_1_b', '4_step two', 10, ONE_MINUTE),
    link('3_between_step_1_b', '4_between_step_1_c', 5, ONE_MINUTE),
    link('4_between_step_1_c', '5_step two', 5, ONE_MINUTE),
  ]

  it('before step 2 (test_path_by_funnel_before_step)', async () => {
    expect(await ctx.run(query('funnel_path_before_step', 2))).toEqual(upToStepTwo)
  })

  it('between steps 1 and 2, and the persons on each edge (test_path_by_funnel_between_step)', async () => {
    const q = query('funnel_path_between_steps', 2)
    expect(await ctx.run(q)).toEqual(upToStepTwo)
    expect(await count(q, '1_step one', '2_between_step_1_a')).toBe(15)
    expect(await count(q, '2_between_step_1_a', '3_between_step_1_b')).toBe(15)
    expect(await count(q, '3_between_step_1_b', '4_step two')).toBe(10)
    expect(await count(q, '3_between_step_1_b', '4_between_step_1_c')).toBe(5)
    expect(await count(q, '4_between_step_1_c', '5_step two')).toBe(5)
  })

  it('steps the funnel cannot have are 400s', async () => {
    for (const [type, step] of [
      ['funnel_path_after_step', 0],
      ['funnel_path_after_step', -1],
      ['funnel_path_after_step', 4],
      ['funnel_path_between_steps', 1],
    ] as const) {
      const r = await ctx.post({ kind: 'PathsQuery', ...query(type, step) })
      expect(r.status, `${type} ${step}: ${r.text}`).toBe(400)
    }
  })
})

describe('funnel paths sessions', () => {
  it('the conversion window, not 30 minutes, splits sessions (test_path_by_funnel_after_step_respects_conversion_window)', async () => {
    const { run, people } = await projectWith('funnel window', dropoffData(true))
    const q = query('funnel_path_after_step', -2)
    const day = 24 * 60 * ONE_MINUTE
    expect(await run(q)).toEqual([
      link('1_step one', '2_step dropoff1', 20, day),
      link('2_step dropoff1', '3_step dropoff2', 20, day),
      link('3_step dropoff2', '4_step branch', 10, day),
    ])
    expect(await people(q, { pathStartKey: '3_step dropoff2', pathEndKey: '4_step branch' })).toHaveLength(10)
  })
})

// ExperimentQuery through POST /query/ on real ClickHouse, with PostHog's own cases
// (posthog/hogql_queries/experiments/test/experiment_query_runner: test_mean_metric.py's property
// sum, outlier handling and unique sessions, with PostHog's expected sums) and cases of exposure
// attribution and conversion windows whose expected values are worked out beside each one.
// PostHog's experiment in those tests runs from 2020-01-01 12:00 for 14 days.
import { randomUUID } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import {
  api,
  clickhouse,
  createTestKey,
  createTestProject,
  startTestBurrow,
  WITHOUT_PROJECTOR,
} from '../../harness/index.ts'
import { type EventRow, insertEvents } from '../hogql/fixtures.ts'

let project: Project
let call: ReturnType<typeof api>

beforeAll(async () => {
  const burrow = await startTestBurrow({ API_RATE_LIMIT_PER_MINUTE: '100000' }, WITHOUT_PROJECTOR)
  project = await createTestProject('experiment queries')
  call = api(burrow.url, await createTestKey(['*']))
})

const START = '2020-01-01T12:00:00Z'
const END = '2020-01-15T12:00:00Z'

/** An experiment of its own flag `key` (control/test), running over PostHog's test dates. */
async function experiment(key: string, extra: Record<string, unknown> = {}) {
  const r = await call('POST', `/api/projects/${project.id}/experiments/`, {
    name: key,
    feature_flag_key: key,
    start_date: START,
    end_date: END,
    ...extra,
  })
  expect(r.status, r.text).toBe(201)
  return r.body as { id: number }
}

async function query(experimentId: number, metric: Record<string, unknown>, status = 200) {
  const r = await call('POST', `/api/projects/${project.id}/query/`, {
    query: { kind: 'ExperimentQuery', experiment_id: experimentId, metric },
    refresh: 'force_blocking',
  })
  expect(r.status, r.text).toBe(status)
  return r.body
}

/** A person of its own with its events; `at` is UTC 'YYYY-MM-DD HH:MM:SS'. */
function person(events: { event: string; at: string; properties?: Record<string, unknown> }[]): EventRow[] {
  const personId = randomUUID()
  const distinctId = `d-${personId}`
  return events.map((e) => ({
    team: project.id,
    uuid: randomUUID(),
    event: e.event,
    distinctId,
    personId,
    timestamp: e.at,
    properties: e.properties ?? {},
    sessionId: typeof e.properties?.$session_id === 'string' ? e.properties.$session_id : undefined,
  }))
}

const exposure = (
  key: string,
  variant: string,
  at = '2020-01-02 12:00:00',
  extra: Record<string, unknown> = {},
) => ({
  event: '$feature_flag_called',
  at,
  properties: { $feature_flag: key, $feature_flag_response: variant, [`$feature/${key}`]: variant, ...extra },
})

const mean = (event: string, math = 'total', math_property?: string, more: Record<string, unknown> = {}) => ({
  kind: 'ExperimentMetric',
  metric_type: 'mean',
  source: { kind: 'EventsNode', event, math, ...(math_property ? { math_property } : {}) },
  ...more,
})

describe('ExperimentQuery: PostHog test_mean_metric.py', () => {
  it('property sum: control 6 purchases of 10 = 60, test 8 of 15 = 120, ten exposed each', async () => {
    const key = 'sum-metric'
    const e = await experiment(key)
    const rows: EventRow[] = []
    for (const [variant, buyers, amount] of [
      ['control', 6, 10],
      ['test', 8, 15],
    ] as const) {
      for (let i = 0; i < 10; i++) {
        rows.push(
          ...person([
            exposure(key, variant),
            ...(i < buyers ? [{ event: 'purchase', at: '2020-01-02 12:01:00', properties: { amount } }] : []),
          ]),
        )
      }
    }
    await insertEvents(clickhouse(), rows)
    const r = await query(e.id, mean('purchase', 'sum', 'amount'))
    expect(r.baseline).toMatchObject({ key: 'control', number_of_samples: 10, sum: 60, sum_squares: 600 })
    expect(r.variant_results).toHaveLength(1)
    expect(r.variant_results[0]).toMatchObject({
      key: 'test',
      number_of_samples: 10,
      sum: 120,
      sum_squares: 1800,
    })
    // fewer than 50 exposures: PostHog leaves the statistics out and says why
    expect(r.baseline.validation_failures).toEqual(['not-enough-exposures'])
    expect(r.variant_results[0]).toMatchObject({
      chance_to_win: null,
      credible_interval: null,
      significant: false,
    })
  })

  const outliers = async (
    key: string,
    metric: Record<string, unknown>,
    per: (variant: string, i: number) => number,
    buy: (n: number) => { event: string; at: string; properties?: Record<string, unknown> }[],
  ) => {
    const e = await experiment(key)
    const rows: EventRow[] = []
    for (const variant of ['control', 'test']) {
      for (let i = 1; i <= 10; i++) rows.push(...person([exposure(key, variant), ...buy(per(variant, i))]))
    }
    await insertEvents(clickhouse(), rows)
    return query(e.id, metric)
  }

  it('outlier handling for a sum: values clamped to the 10th and 90th percentiles, 1055 each', async () => {
    const amounts = (v: string, i: number) =>
      v === 'control' ? [1, 102, 103, 104, 105, 106, 107, 108, 109, 1110][i - 1]! : 100 + i
    const r = await outliers(
      'outlier-sum',
      mean('purchase', 'sum', 'amount', { lower_bound_percentile: 0.1, upper_bound_percentile: 0.9 }),
      amounts,
      (amount) => [{ event: 'purchase', at: '2020-01-02 12:01:00', properties: { amount } }],
    )
    expect(r.baseline).toMatchObject({ number_of_samples: 10, sum: 1055 })
    expect(r.variant_results[0]).toMatchObject({ number_of_samples: 10, sum: 1055 })
  })

  it('outlier handling for a count: 30.9 and 38.9', async () => {
    const counts = (v: string, i: number) =>
      v === 'control' ? (i === 1 ? 1 : i === 10 ? 100 : 3) : i === 1 ? 2 : 4
    const r = await outliers(
      'outlier-count',
      mean('purchase', 'total', undefined, { lower_bound_percentile: 0.1, upper_bound_percentile: 0.9 }),
      counts,
      (n) =>
        Array.from({ length: n }, (_, k) => ({
          event: 'purchase',
          at: `2020-01-02 12:${String(1 + Math.floor(k / 60)).padStart(2, '0')}:${String(k % 60).padStart(2, '0')}`,
        })),
    )
    expect(r.baseline.sum).toBeCloseTo(30.9, 9)
    expect(r.variant_results[0].sum).toBeCloseTo(38.9, 9)
  })

  it('unique sessions: 3 in control (one person with none), 5 in test', async () => {
    const key = 'unique-sessions'
    const e = await experiment(key)
    const visits = (variant: string, count: number, session: string) => [
      exposure(key, variant, '2020-01-02 12:00:00', { $session_id: session }),
      ...Array.from({ length: count }, (_, i) => ({
        event: '$pageview',
        at: `2020-01-02 12:01:0${i}`,
        properties: { $session_id: session },
      })),
    ]
    const rows = [
      ...person([...visits('control', 3, 'c_1_a'), ...visits('control', 3, 'c_1_b')]),
      ...person(visits('control', 3, 'c_2_a')),
      ...person(visits('control', 0, 'c_3_a')),
      ...person([...visits('test', 3, 't_1_a'), ...visits('test', 3, 't_1_b')]),
      ...person([
        ...visits('test', 3, 't_2_a'),
        ...visits('test', 3, 't_2_b'),
        ...visits('test', 3, 't_2_c'),
      ]),
    ]
    await insertEvents(clickhouse(), rows)
    const r = await query(e.id, mean('$pageview', 'unique_session'))
    expect(r.baseline).toMatchObject({ number_of_samples: 3, sum: 3 })
    expect(r.variant_results[0]).toMatchObject({ number_of_samples: 2, sum: 5 })
  })
})

describe('ExperimentQuery: exposure attribution and conversion windows', () => {
  it("counts each person once on the flag's own exposures inside the dates; a person with both variants is $multiple and left out", async () => {
    const key = 'attribution'
    const e = await experiment(key)
    const buy = (at: string) => ({ event: 'purchase', at })
    const rows = [
      // P1 control, exposed twice, buys twice after: 1 person, 2 purchases
      ...person([
        exposure(key, 'control'),
        exposure(key, 'control', '2020-01-03 00:00:00'),
        buy('2020-01-02 13:00:00'),
        buy('2020-01-04 13:00:00'),
      ]),
      // P2 test, bought before the exposure (not counted) and once after
      ...person([buy('2020-01-02 11:00:00'), exposure(key, 'test'), buy('2020-01-02 12:30:00')]),
      // P3 saw both variants: $multiple, left out
      ...person([
        exposure(key, 'control'),
        exposure(key, 'test', '2020-01-02 13:00:00'),
        buy('2020-01-02 14:00:00'),
      ]),
      // P4 exposed before the start, P5 after the end, P6 to another flag, P7 to an unknown variant
      ...person([exposure(key, 'control', '2020-01-01 11:00:00'), buy('2020-01-02 14:00:00')]),
      ...person([exposure(key, 'test', '2020-01-16 00:00:00'), buy('2020-01-16 01:00:00')]),
      ...person([
        {
          ...exposure('other-flag', 'test'),
          properties: { $feature_flag: 'other-flag', $feature_flag_response: 'test' },
        },
        buy('2020-01-02 14:00:00'),
      ]),
      ...person([exposure(key, 'unknown'), buy('2020-01-02 14:00:00')]),
      // P8 test, buys after the experiment ended: exposed, not converted
      ...person([exposure(key, 'test'), buy('2020-01-15 13:00:00')]),
    ]
    await insertEvents(clickhouse(), rows)
    const r = await query(e.id, mean('purchase'))
    expect(r.baseline).toMatchObject({ key: 'control', number_of_samples: 1, sum: 2 })
    expect(r.variant_results[0]).toMatchObject({ key: 'test', number_of_samples: 2, sum: 1 })

    // first_seen: P3 counts under control, its first variant, with its purchase
    await call('PATCH', `/api/projects/${project.id}/experiments/${e.id}/`, {
      exposure_criteria: { multiple_variant_handling: 'first_seen' },
    })
    const first = await query(e.id, mean('purchase'))
    expect(first.baseline).toMatchObject({ number_of_samples: 2, sum: 3 })
    expect(first.variant_results[0]).toMatchObject({ number_of_samples: 2, sum: 1 })
  })

  it("exposure_criteria.filterTestAccounts leaves the project's test accounts out of exposures and metric events", async () => {
    // PostHog's _get_test_accounts_filter: the same filters on the exposure query and the metric
    // events. Internal traffic here is $host localhost:8000 (is_not: a missing $host is kept).
    const patch = await call('PATCH', `/api/projects/${project.id}/`, {
      test_account_filters: [{ key: '$host', value: 'localhost:8000', operator: 'is_not', type: 'event' }],
    })
    expect(patch.status, patch.text).toBe(200)
    const key = 'test-accounts'
    const e = await experiment(key)
    const internal = { $host: 'localhost:8000' }
    const buy = (properties: Record<string, unknown> = {}) => ({
      event: 'purchase',
      at: '2020-01-02 12:10:00',
      properties,
    })
    const rows = [
      // P1 control: counts either way
      ...person([exposure(key, 'control'), buy()]),
      // P2 control, exposed on internal traffic: not exposed with the filters
      ...person([exposure(key, 'control', '2020-01-02 12:00:00', internal), buy()]),
      // P3 test: exposed, its purchase internal (left out with the filters)
      ...person([exposure(key, 'test'), buy(internal)]),
      // P4 test: counts either way
      ...person([exposure(key, 'test'), buy()]),
    ]
    await insertEvents(clickhouse(), rows)
    const off = await query(e.id, mean('purchase'))
    expect(off.baseline).toMatchObject({ number_of_samples: 2, sum: 2 })
    expect(off.variant_results[0]).toMatchObject({ number_of_samples: 2, sum: 2 })
    await call('PATCH', `/api/projects/${project.id}/experiments/${e.id}/`, {
      exposure_criteria: { filterTestAccounts: true },
    })
    const on = await query(e.id, mean('purchase'))
    expect(on.baseline).toMatchObject({ number_of_samples: 1, sum: 1 })
    expect(on.variant_results[0]).toMatchObject({ number_of_samples: 2, sum: 1 })
  })

  it('a custom exposure event carries the variant in $feature/<key>, filtered by its properties', async () => {
    const key = 'custom-exposure'
    const e = await experiment(key, {
      exposure_criteria: {
        exposure_config: {
          kind: 'ExperimentEventExposureConfig',
          event: 'page_seen',
          properties: [{ key: 'page', value: 'checkout', operator: 'exact', type: 'event' }],
        },
      },
    })
    const seen = (variant: string, page: string) => ({
      event: 'page_seen',
      at: '2020-01-02 12:00:00',
      properties: { [`$feature/${key}`]: variant, page },
    })
    const rows = [
      ...person([seen('control', 'checkout'), { event: 'purchase', at: '2020-01-02 12:10:00' }]),
      ...person([seen('test', 'checkout')]),
      ...person([seen('test', 'home'), { event: 'purchase', at: '2020-01-02 12:10:00' }]),
      // $feature_flag_called does not expose when another event is the exposure
      ...person([exposure(key, 'test'), { event: 'purchase', at: '2020-01-02 12:10:00' }]),
    ]
    await insertEvents(clickhouse(), rows)
    const r = await query(e.id, mean('purchase'))
    expect(r.baseline).toMatchObject({ number_of_samples: 1, sum: 1 })
    expect(r.variant_results[0]).toMatchObject({ number_of_samples: 1, sum: 0 })
  })

  it('with a conversion window, events count from the first exposure until the window after the last one', async () => {
    const key = 'window'
    const e = await experiment(key)
    const buy = (at: string) => ({ event: 'purchase', at })
    const rows = [
      // 30 min and 2 h after the only exposure: the 1-hour window keeps the first
      ...person([exposure(key, 'control'), buy('2020-01-02 12:30:00'), buy('2020-01-02 14:00:00')]),
      // exposed again at 15:00: the window runs to 16:00, so the 15:30 purchase counts too
      ...person([
        exposure(key, 'test'),
        exposure(key, 'test', '2020-01-02 15:00:00'),
        buy('2020-01-02 12:10:00'),
        buy('2020-01-02 15:30:00'),
        buy('2020-01-02 16:30:00'),
      ]),
      // the window reaches past the end date: exposed 30 min before the end, bought 15 min after it
      ...person([exposure(key, 'test', '2020-01-15 11:30:00'), buy('2020-01-15 12:15:00')]),
    ]
    await insertEvents(clickhouse(), rows)
    const r = await query(
      e.id,
      mean('purchase', 'total', undefined, { conversion_window: 1, conversion_window_unit: 'hour' }),
    )
    expect(r.baseline).toMatchObject({ number_of_samples: 1, sum: 1 })
    expect(r.variant_results[0]).toMatchObject({ number_of_samples: 2, sum: 3 })
    // without the window every purchase after the exposure until the end date counts
    const all = await query(e.id, mean('purchase'))
    expect(all.baseline).toMatchObject({ sum: 2 })
    expect(all.variant_results[0]).toMatchObject({ sum: 3 })
  })

  it('funnel: steps in order after the exposure, within the window from it; step counts per step', async () => {
    const key = 'funnel'
    const e = await experiment(key)
    const ev = (event: string, at: string) => ({ event, at })
    const rows = [
      // control: completes; does step 2 before step 1 (stops at 1); completes but 2 h after exposure
      ...person([
        exposure(key, 'control'),
        ev('cart', '2020-01-02 12:05:00'),
        ev('buy', '2020-01-02 12:10:00'),
      ]),
      ...person([
        exposure(key, 'control'),
        ev('buy', '2020-01-02 12:05:00'),
        ev('cart', '2020-01-02 12:10:00'),
      ]),
      ...person([
        exposure(key, 'control'),
        ev('cart', '2020-01-02 13:00:01'),
        ev('buy', '2020-01-02 14:00:00'),
      ]),
      // test: steps before the exposure do not count; completes
      ...person([ev('cart', '2020-01-02 11:00:00'), ev('buy', '2020-01-02 11:05:00'), exposure(key, 'test')]),
      ...person([exposure(key, 'test'), ev('cart', '2020-01-02 12:01:00'), ev('buy', '2020-01-02 12:02:00')]),
    ]
    await insertEvents(clickhouse(), rows)
    const metric = {
      kind: 'ExperimentMetric',
      metric_type: 'funnel',
      series: [
        { kind: 'EventsNode', event: 'cart' },
        { kind: 'EventsNode', event: 'buy' },
      ],
    }
    const r = await query(e.id, metric)
    expect(r.baseline).toMatchObject({ number_of_samples: 3, sum: 2, step_counts: [3, 2] })
    expect(r.variant_results[0]).toMatchObject({ number_of_samples: 2, sum: 1, step_counts: [1, 1] })
    const windowed = await query(e.id, { ...metric, conversion_window: 1, conversion_window_unit: 'hour' })
    // the third control person reaches cart a second after the hour (the window is inclusive, as
    // PostHog's funnel and ClickHouse's windowFunnel count it): exposure only
    expect(windowed.baseline).toMatchObject({ number_of_samples: 3, sum: 1, step_counts: [2, 1] })
  })

  it('ratio: per-person numerator and denominator sums with their squares and cross product', async () => {
    const key = 'ratio'
    const e = await experiment(key)
    const ev = (event: string, amount?: number) => ({
      event,
      at: '2020-01-02 12:30:00',
      properties: amount ? { amount } : {},
    })
    const rows = [
      ...person([
        exposure(key, 'control'),
        ev('purchase', 10),
        ev('purchase', 20),
        ev('$pageview'),
        ev('$pageview'),
      ]),
      ...person([exposure(key, 'control'), ev('$pageview')]),
      ...person([
        exposure(key, 'test'),
        ev('purchase', 5),
        ev('$pageview'),
        ev('$pageview'),
        ev('$pageview'),
      ]),
    ]
    await insertEvents(clickhouse(), rows)
    const r = await query(e.id, {
      kind: 'ExperimentMetric',
      metric_type: 'ratio',
      numerator: { kind: 'EventsNode', event: 'purchase', math: 'sum', math_property: 'amount' },
      denominator: { kind: 'EventsNode', event: '$pageview' },
    })
    // control: (30, 2) and (0, 1); test: (5, 3)
    expect(r.baseline).toMatchObject({
      number_of_samples: 2,
      sum: 30,
      sum_squares: 900,
      denominator_sum: 3,
      denominator_sum_squares: 5,
      numerator_denominator_sum_product: 60,
    })
    expect(r.variant_results[0]).toMatchObject({
      sum: 5,
      denominator_sum: 3,
      numerator_denominator_sum_product: 15,
    })
  })

  it('answers a draft, an unknown experiment and a malformed metric with a 400', async () => {
    const draft = await call('POST', `/api/projects/${project.id}/experiments/`, {
      name: 'draft',
      feature_flag_key: 'draft-q',
    })
    expect((await query(draft.body.id, mean('purchase'), 400)).detail).toBe(
      'The experiment has not been launched yet',
    )
    expect((await query(999_999, mean('purchase'), 400)).detail).toBe('Experiment with id 999999 not found')
    await query(draft.body.id, { metric_type: 'mean' }, 400)
  })
})

// A simulated A/B test of 1,000 users, sent through capture and projected: each user is assigned a
// variant and converts with its variant's rate by a seeded generator; some also bought before their
// exposure, some saw both variants. The expected counts are tallied here from the generated events,
// and the chance to win is checked against a Monte Carlo reference computed here (Beta posteriors
// with a uniform prior, seeded draws), not by the code under test.
import beta from '@stdlib/random-base-beta'
import { beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import { api, createTestKey, createTestProject, startTestBurrow } from '../../harness/index.ts'

const USERS = 1000
const RATES = { control: 0.3, test: 0.34 }

/** mulberry32: a small seeded generator for the simulation (the reference uses @stdlib's). */
function seeded(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

let burrowUrl: string
let project: Project
let call: ReturnType<typeof api>

beforeAll(async () => {
  const burrow = await startTestBurrow({ API_RATE_LIMIT_PER_MINUTE: '100000' })
  burrowUrl = burrow.url
  project = await createTestProject('experiment simulation')
  call = api(burrow.url, await createTestKey(['*']))
})

interface Event {
  event: string
  distinct_id: string
  timestamp: string
  properties: Record<string, unknown>
}

describe('a simulated experiment of 1,000 users through capture', () => {
  it('gets its counts exactly and the chance to win within 0.02 of a Monte Carlo reference', async () => {
    const key = 'simulated-checkout'
    const start = Date.now() - 3 * 3600_000
    const created = await call('POST', `/api/projects/${project.id}/experiments/`, {
      name: 'Simulated checkout',
      feature_flag_key: key,
      start_date: new Date(start).toISOString(),
    })
    expect(created.status, created.text).toBe(201)

    const rnd = seeded(20261201)
    const events: Event[] = []
    const tally = { control: { n: 0, converted: 0 }, test: { n: 0, converted: 0 } }
    const at = (ms: number) => new Date(ms).toISOString()
    for (let i = 0; i < USERS; i++) {
      const id = `sim-user-${i}`
      const variant = rnd() < 0.5 ? 'control' : 'test'
      const exposedAt = start + 60_000 + i * 5_000
      const exposure = (v: string, t: number) => ({
        event: '$feature_flag_called',
        distinct_id: id,
        timestamp: at(t),
        properties: { $feature_flag: key, $feature_flag_response: v },
      })
      // a purchase before the exposure never counts
      if (rnd() < 0.1)
        events.push({ event: 'purchase', distinct_id: id, timestamp: at(exposedAt - 30_000), properties: {} })
      events.push(exposure(variant, exposedAt))
      // 2% see the other variant later: PostHog's $multiple, left out
      const both = rnd() < 0.02
      if (both) events.push(exposure(variant === 'control' ? 'test' : 'control', exposedAt + 1_000))
      const converts = rnd() < RATES[variant]
      if (converts)
        events.push({ event: 'purchase', distinct_id: id, timestamp: at(exposedAt + 20_000), properties: {} })
      if (!both) {
        tally[variant].n++
        if (converts) tally[variant].converted++
      }
    }
    for (let i = 0; i < events.length; i += 500) {
      const res = await fetch(`${burrowUrl}/batch/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ api_key: project.api_token, batch: events.slice(i, i + 500) }),
      })
      expect(res.status).toBe(200)
    }
    // projected: every captured event is in ClickHouse
    const deadline = Date.now() + 60_000
    for (;;) {
      const r = await call('POST', `/api/projects/${project.id}/query/`, {
        query: { kind: 'HogQLQuery', query: 'SELECT count() FROM events' },
        refresh: 'force_blocking',
      })
      if (r.body?.results?.[0]?.[0] === events.length) break
      if (Date.now() > deadline) throw new Error(`projection incomplete: ${r.text}`)
      await new Promise((resolve) => setTimeout(resolve, 250))
    }

    const r = await call('POST', `/api/projects/${project.id}/query/`, {
      query: {
        kind: 'ExperimentQuery',
        experiment_id: created.body.id,
        metric: {
          kind: 'ExperimentMetric',
          metric_type: 'funnel',
          series: [{ kind: 'EventsNode', event: 'purchase' }],
        },
      },
      refresh: 'force_blocking',
    })
    expect(r.status, r.text).toBe(200)
    expect(r.body.baseline).toMatchObject({
      key: 'control',
      number_of_samples: tally.control.n,
      sum: tally.control.converted,
      step_counts: [tally.control.converted],
      validation_failures: [],
    })
    const test = r.body.variant_results[0]
    expect(test).toMatchObject({ key: 'test', number_of_samples: tally.test.n, sum: tally.test.converted })

    // the reference: P(p_test > p_control) under Beta(1 + s, 1 + n - s) posteriors, 200,000 draws
    const draws = 200_000
    const c = beta.factory(1 + tally.control.converted, 1 + tally.control.n - tally.control.converted, {
      seed: 7,
    })
    const t = beta.factory(1 + tally.test.converted, 1 + tally.test.n - tally.test.converted, { seed: 11 })
    let wins = 0
    for (let i = 0; i < draws; i++) if (t() > c()) wins++
    const reference = wins / draws
    expect(Math.abs(test.chance_to_win - reference)).toBeLessThan(0.02)
    expect(test.credible_interval[0]).toBeLessThan(test.credible_interval[1])
    expect(r.body.sample_size.current_exposures).toBe(tally.control.n + tally.test.n)
    expect(r.body.sample_size.recommended_sample_size).toBeGreaterThan(0)
  })
})

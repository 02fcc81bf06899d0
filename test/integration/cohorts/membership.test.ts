import { beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import { clickhouse, createTestKey, createTestProject } from '../../harness/index.ts'
import { type Env, managementEnv } from '../../harness/management.ts'
import { ago, People } from './helpers.ts'

// PostHog's cohort membership cases (posthog/queries/test/test_cohort_query.py, run there through
// HogQLCohortQuery), each with its own project: the people and events of the case, the cohort
// created through the API, its calculation awaited, and its members (GET /cohorts/:id/persons/)
// compared with PostHog's expected persons.

let env: Env
let key: string
const ch = clickhouse()

beforeAll(async () => {
  env = await managementEnv()
  key = await createTestKey(['*'])
})

type Setup = (p: People, project: Project) => Promise<void> | void

const beh = (key: string | number, value: string, extra: Record<string, unknown> = {}) => ({
  key,
  event_type: 'events',
  value,
  type: 'behavioral',
  ...extra,
})
const person = (key: string, value: unknown, extra: Record<string, unknown> = {}) => ({
  key,
  value,
  type: 'person',
  ...extra,
})
const and = (...values: unknown[]) => ({ type: 'AND', values })
const or = (...values: unknown[]) => ({ type: 'OR', values })

async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const v = await fn()
    if (v !== undefined) return v
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** Creates the cohort and waits for its calculation; returns the cohort as then shown. */
async function calculated(project: Project, body: Record<string, unknown>) {
  const created = await env.call('POST', `/api/projects/${project.id}/cohorts/`, body)
  expect(created.status, JSON.stringify(created.body)).toBe(201)
  return waitCalculated(project, created.body.id)
}

async function waitCalculated(project: Project, id: number) {
  return until(`cohort ${id}`, async () => {
    const r = await env.call('GET', `/api/projects/${project.id}/cohorts/${id}/`)
    return r.body.is_calculating ? undefined : r.body
  })
}

async function memberIds(project: Project, id: number): Promise<string[]> {
  const r = await env.call('GET', `/api/projects/${project.id}/cohorts/${id}/persons/?limit=1000`)
  expect(r.status, JSON.stringify(r.body)).toBe(200)
  return r.body.results.map((p: { id: string }) => p.id)
}

/** The distinct ids of the members of a cohort of `properties`, after `setup`. */
async function members(properties: unknown, setup: Setup): Promise<string[]> {
  const project = await createTestProject('cohort case')
  const people = new People(ch, project.id)
  await setup(people, project)
  await people.flush()
  const c = await calculated(project, { name: 'case', filters: { properties } })
  expect(c.errors_calculating, JSON.stringify(c)).toBe(0)
  const ids = await memberIds(project, c.id)
  expect(c.count).toBe(ids.length)
  return people.names(ids)
}

const everyone = async (p: People, ids: string[]) => {
  for (const d of ids) await p.person(d, { name: 'test', email: 'test@posthog.com' })
}

describe('behavioural filters (PostHog TestCohortQuery)', () => {
  it('performed an event, explicit relative date', async () => {
    const got = await members(
      and(beh('$pageview', 'performed_event', { explicit_datetime: '-1w' })),
      async (p) => {
        await everyone(p, ['p1', 'p2'])
        p.event('p1', '$pageview', ago({ days: 2 }))
        p.event('p2', '$pageview', ago({ days: 9 }))
      },
    )
    expect(got).toEqual(['p1'])
  })

  it('performed an event with event filters and an explicit date', async () => {
    const props = and(
      beh('$pageview', 'performed_event', {
        explicit_datetime: ago({ days: 3 }),
        time_value: 1,
        time_interval: 'week',
        event_filters: [{ key: '$filter_prop', value: 'something', operator: 'exact', type: 'event' }],
      }),
    )
    const got = await members(props, async (p) => {
      await everyone(p, ['p1', 'p2'])
      p.event('p1', '$pageview', ago({ days: 2 }), { $filter_prop: 'something' })
      p.event('p2', '$pageview', ago({ days: 2 }))
      p.event('p2', '$pageview', ago({ days: 5 }), { $filter_prop: 'something' })
    })
    expect(got).toEqual(['p1'])
  })

  it('performed an event at least once in a week', async () => {
    const multiple = beh('$pageview', 'performed_event_multiple', {
      operator: 'gte',
      operator_value: 1,
      time_value: 1,
      time_interval: 'week',
    })
    const got = await members(and(multiple), async (p) => {
      await everyone(p, ['p1', 'p2'])
      p.event('p1', '$pageview', ago({ days: 2 }))
      p.event('p1', '$pageview', ago({ days: 4 }))
      p.event('p2', '$pageview', ago({ days: 9 }))
    })
    expect(got).toEqual(['p1'])
  })

  it('performed an event at most once (those who never did are not in)', async () => {
    const lte = beh('$pageview', 'performed_event_multiple', {
      operator: 'lte',
      operator_value: 1,
      time_value: 1,
      time_interval: 'week',
    })
    const got = await members(and(lte), async (p) => {
      await everyone(p, ['p1', 'p2', 'p3'])
      p.event('p2', '$pageview', ago({ hours: 9 }))
      p.event('p3', '$pageview', ago({ hours: 9 }))
      p.event('p3', '$pageview', ago({ hours: 8 }))
    })
    expect(got).toEqual(['p2'])
  })

  it('many performed-multiple filters, ORed', async () => {
    const eq = (n: number) =>
      beh('$pageview', 'performed_event_multiple', {
        operator: 'eq',
        operator_value: n,
        time_value: 1,
        time_interval: 'week',
      })
    const got = await members(or(eq(1), eq(2)), async (p) => {
      await everyone(p, ['p1', 'p2', 'p3'])
      p.event('p1', '$pageview', ago({ hours: 9 }))
      p.event('p2', '$pageview', ago({ hours: 9 }))
      p.event('p3', '$pageview', ago({ hours: 9 }))
      p.event('p3', '$pageview', ago({ hours: 8 }))
    })
    expect(got).toEqual(['p1', 'p2', 'p3'])
  })

  it('stopped performing an event', async () => {
    const stopped = beh('$pageview', 'stopped_performing_event', {
      time_value: 2,
      time_interval: 'week',
      seq_time_value: 1,
      seq_time_interval: 'week',
    })
    const got = await members(and(stopped), async (p) => {
      await everyone(p, ['p1', 'p2'])
      p.event('p1', '$pageview', ago({ days: 10 }))
      p.event('p2', '$pageview', ago({ days: 3 }))
    })
    expect(got).toEqual(['p1'])
  })

  it('restarted performing an event', async () => {
    const restarted = beh('$pageview', 'restarted_performing_event', {
      time_value: 1,
      time_interval: 'week',
      seq_time_value: 2,
      seq_time_interval: 'day',
    })
    const got = await members(and(restarted), async (p) => {
      await everyone(p, ['p1', 'p2', 'p3'])
      p.event('p1', '$pageview', ago({ days: 20 }))
      p.event('p1', '$pageview', ago({ days: 1 }))
      p.event('p2', '$pageview', ago({ days: 20 }))
      p.event('p2', '$pageview', ago({ days: 5 }))
      p.event('p2', '$pageview', ago({ days: 1 }))
      p.event('p3', '$pageview', ago({ days: 1 }))
    })
    expect(got).toEqual(['p1'])
  })

  it('performed an event for the first time', async () => {
    const first = beh('$pageview', 'performed_event_first_time', { time_value: 1, time_interval: 'week' })
    const got = await members(and(first), async (p) => {
      await everyone(p, ['p1', 'p2'])
      p.event('p1', '$pageview', ago({ days: 20 }))
      p.event('p1', '$pageview', ago({ days: 4 }))
      p.event('p2', '$pageview', ago({ days: 4 }))
    })
    expect(got).toEqual(['p2'])
  })

  it('performed an event regularly', async () => {
    const regularly = beh('$pageview', 'performed_event_regularly', {
      operator: 'gte',
      operator_value: 1,
      time_interval: 'day',
      time_value: 3,
      total_periods: 3,
      min_periods: 3,
    })
    const got = await members(and(regularly), async (p) => {
      await everyone(p, ['p1'])
      p.sequence('p1', 3, [1, 1, 1, 1])
    })
    expect(got).toEqual(['p1'])
  })

  it('performed an event regularly, with event counts that vary per period', async () => {
    const regularly = (n: number) =>
      beh('$pageview', 'performed_event_regularly', {
        operator: 'gte',
        operator_value: n,
        time_interval: 'day',
        time_value: 3,
        total_periods: 3,
        min_periods: 2,
      })
    const setup: Setup = async (p) => {
      await everyone(p, ['p1', 'p2'])
      p.sequence('p1', 3, [0, 1, 2])
      p.sequence('p2', 3, [1, 2, 2])
    }
    expect(await members(and(regularly(2)), setup)).toEqual(['p2'])
    expect(await members(and(regularly(1)), setup)).toEqual(['p1', 'p2'])
  })

  it('performed an event regularly, by years', async () => {
    const yearly = beh('Application Opened', 'performed_event_regularly', {
      operator: 'gte',
      operator_value: 2,
      time_interval: 'year',
      time_value: 1,
      total_periods: 2,
      min_periods: 2,
    })
    const got = await members(or(or(yearly)), async (p) => {
      await everyone(p, ['p1', 'p2', 'p3'])
      for (const d of [2, 1, 400, 401]) p.event('p1', 'Application Opened', ago({ days: d }))
      p.event('p2', 'Application Opened', ago({ days: 1 }))
      for (const d of [2, 1, 400]) p.event('p3', 'Application Opened', ago({ days: d }))
      p.event('p3', 'Other', ago({ days: 401 }))
    })
    expect(got).toEqual(['p1'])
  })

  it('performed a sequence of events', async () => {
    const sequence = beh('$pageview', 'performed_event_sequence', {
      time_interval: 'day',
      time_value: 7,
      seq_time_interval: 'day',
      seq_time_value: 3,
      seq_event: '$pageview',
      seq_event_type: 'events',
    })
    const got = await members(and(sequence), async (p) => {
      await everyone(p, ['p1', 'p2'])
      p.sequence('p1', 2, [1, 1])
      p.event('p2', '$pageview', ago({ days: 2 }))
    })
    expect(got).toEqual(['p1'])
  })

  it('a sequence, or restarted performing an event', async () => {
    const props = or(
      beh('$pageview', 'performed_event_sequence', {
        time_interval: 'day',
        time_value: 7,
        seq_time_interval: 'day',
        seq_time_value: 3,
        seq_event: '$pageview',
        seq_event_type: 'events',
      }),
      beh('$new_view', 'restarted_performing_event', {
        time_value: 2,
        time_interval: 'week',
        seq_time_value: 1,
        seq_time_interval: 'week',
      }),
    )
    const got = await members(props, async (p) => {
      await everyone(p, ['p1', 'p2'])
      p.sequence('p1', 2, [1, 1])
      p.event('p2', '$new_view', ago({ days: 18 }))
      p.event('p2', '$new_view', ago({ days: 5 }))
    })
    expect(got).toEqual(['p1', 'p2'])
  })
})

describe('person filters, negation and other cohorts (PostHog TestCohortQuery)', () => {
  it('person properties only', async () => {
    const props = or(
      or(person('email', 'test1@posthog.com'), person('email', 'test2@posthog.com')),
      and(person('name', 'test3'), person('email', 'test3@posthog.com')),
    )
    const got = await members(props, async (p) => {
      await p.person('p1', { name: 'test', email: 'test1@posthog.com' })
      await p.person('p2', { name: 'test', email: 'test2@posthog.com' })
      await p.person('p3', { name: 'test3', email: 'test3@posthog.com' })
      await p.person('p4', { name: 'test3', email: 'test4@posthog.com' })
    })
    expect(got).toEqual(['p1', 'p2', 'p3'])
  })

  it('a person property or an event', async () => {
    const props = or(
      beh('$pageview', 'performed_event', { time_value: 1, time_interval: 'week' }),
      person('$sample_field', 'test@posthog.com'),
    )
    const got = await members(props, async (p) => {
      await p.person('p1', { name: 'test', $sample_field: 'test@posthog.com' })
    })
    expect(got).toEqual(['p1'])
  })

  it('a list of values with the in operator', async () => {
    const props = or(or(person('email', ['test1@example.com', 'test2@example.com'], { operator: 'in' })))
    const got = await members(props, async (p) => {
      await p.person('p1', { email: 'test1@example.com' })
      await p.person('p2', { email: 'test2@example.com' })
      await p.person('p3', { email: 'other@example.com' })
    })
    expect(got).toEqual(['p1', 'p2'])
  })

  it('a negated event ANDed with another', async () => {
    const props = and(
      beh('$pageview', 'performed_event', { negation: true, time_value: '30', time_interval: 'day' }),
      beh('$feature_flag_called', 'performed_event', {
        negation: false,
        time_value: '30',
        time_interval: 'day',
      }),
    )
    const got = await members(props, async (p) => {
      await everyone(p, ['p1', 'p2', 'p3'])
      p.event('p1', '$pageview', ago({ days: 2 }))
      p.event('p2', '$pageview', ago({ days: 10 }))
      p.event('p3', '$feature_flag_called', ago({ days: 10 }))
    })
    expect(got).toEqual(['p3'])
  })

  it('a negated event with its own time bound', async () => {
    const props = and(
      beh('$new_view', 'performed_event', { time_value: 1, time_interval: 'week' }),
      beh('$pageview', 'performed_event', { time_value: 2, time_interval: 'week', negation: true }),
    )
    const got = await members(props, async (p) => {
      await everyone(p, ['p1', 'p2', 'p3', 'p4'])
      p.event('p1', '$pageview', ago({ days: 2 }))
      p.event('p1', '$new_view', ago({ days: 4 }))
      p.event('p2', '$pageview', ago({ days: 4 }))
      p.event('p3', '$pageview', ago({ days: 35 }))
      p.event('p3', '$new_view', ago({ days: 4 }))
      p.event('p4', '$new_view', ago({ days: 4 }))
    })
    expect(got).toEqual(['p3', 'p4'])
  })

  it('a negated sequence', async () => {
    const props = and(
      beh('$new_view', 'performed_event', { time_value: 1, time_interval: 'week' }),
      beh('$pageview', 'performed_event_sequence', {
        time_interval: 'day',
        time_value: 8,
        seq_time_interval: 'day',
        seq_time_value: 3,
        seq_event: '$pageview',
        seq_event_type: 'events',
        negation: true,
      }),
    )
    const got = await members(props, async (p) => {
      await everyone(p, ['p1', 'p2', 'p3', 'p4', 'p5', 'p6'])
      p.sequence('p1', 2, [1, 1])
      p.event('p1', '$new_view', ago({ days: 4 }))
      p.sequence('p2', 2, [1, 1])
      p.event('p3', '$pageview', ago({ days: 35 }))
      p.event('p3', '$pageview', ago({ days: 37 }))
      p.event('p3', '$new_view', ago({ days: 4 }))
      p.event('p4', '$new_view', ago({ days: 4 }))
      p.event('p5', '$pageview', ago({ days: 5 }))
      p.event('p5', '$new_view', ago({ days: 4 }))
      p.sequence('p6', 4, [1, 1])
      p.event('p6', '$new_view', ago({ days: 4 }))
    })
    expect(got).toEqual(['p3', 'p4', 'p5', 'p6'])
  })

  it('cohorts inside cohorts, negated, over levels', async () => {
    const project = await createTestProject('nested cohorts')
    const p = new People(ch, project.id)
    await p.person('p1', { name: 'test2', email: 'test@posthog.com' })
    await p.person('p2', { name: 'test', email: 'test@posthog.com' })
    await p.person('p3', { name: 'test2', email: 'test@posthog.com' })
    await p.person('p4', { name: 'test3', email: 'test@posthog.com' })
    p.event('p1', '$new_view', ago({ days: 6 }))
    p.event('p1', '$some_event', ago({ days: 6 }))
    p.event('p2', '$some_event', ago({ days: 6 }))
    p.event('p3', '$some_event', ago({ days: 6 }))
    p.event('p4', '$target_event', ago({ days: 6 }))
    await p.flush()
    const c1 = await calculated(project, {
      name: 'cohort 1',
      filters: {
        properties: and(beh('$new_view', 'performed_event', { time_interval: 'day', time_value: 7 })),
      },
    })
    const c2 = await calculated(project, {
      name: 'cohort 2',
      filters: {
        properties: and(
          beh('$some_event', 'performed_event', { time_interval: 'day', time_value: 7 }),
          person('name', 'test2', { negation: true }),
          { key: 'id', value: c1.id, type: 'cohort', negation: true },
        ),
      },
    })
    const c3 = await calculated(project, {
      name: 'cohort 3',
      filters: {
        properties: and(person('name', 'test3'), { key: 'id', value: c2.id, type: 'cohort', negation: true }),
      },
    })
    // PostHog's test_unwrap_with_negated_cohort and test_unwrap_multiple_levels
    expect(p.names(await memberIds(project, c2.id))).toEqual(['p2'])
    expect(p.names(await memberIds(project, c3.id))).toEqual(['p4'])
  })

  it('a static cohort inside a dynamic one', async () => {
    const project = await createTestProject('static inside')
    const p = new People(ch, project.id)
    await p.person('p1', { name: 'test' })
    await p.person('p2', { name: 'test', email: 'test@posthog.com' })
    p.event('p2', '$pageview', ago({ days: 2 }))
    await p.flush()
    const csv = await upload(project, 'static', 'p1\np2\n')
    const st = await waitCalculated(project, csv)
    expect(st.count).toBe(2)
    const inner = { key: 'id', value: st.id, type: 'cohort' }
    const week = beh('$pageview', 'performed_event', { time_value: 1, time_interval: 'week' })
    const a = await calculated(project, { name: 'and', filters: { properties: and(inner, week) } })
    const o = await calculated(project, { name: 'or', filters: { properties: or(inner, week) } })
    // PostHog's test_static_cohort_filter_with_extra
    expect(p.names(await memberIds(project, a.id))).toEqual(['p2'])
    expect(p.names(await memberIds(project, o.id))).toEqual(['p1', 'p2'])
  })
})

/** A static cohort from a CSV file, uploaded as PostHog's UI uploads it (multipart, field `csv`). */
async function upload(project: Project, name: string, csv: string): Promise<number> {
  const form = new FormData()
  form.set('name', name)
  form.set('is_static', 'true')
  form.set('csv', new Blob([csv], { type: 'text/csv' }), 'people.csv')
  const res = await fetch(`${env.burrow.url}/api/projects/${project.id}/cohorts/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
    body: form,
  })
  const text = await res.text()
  expect(res.status, text).toBe(201)
  return JSON.parse(text).id as number
}

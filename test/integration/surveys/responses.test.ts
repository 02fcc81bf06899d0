import { beforeAll, describe, expect, it } from 'vitest'
import { untilProjected } from '../sdk/helpers.ts'
import { isolatedBurrow, type Isolated } from '../sdk/isolated.ts'
import { post } from '../flags/helpers.ts'

// Survey responses are ordinary events: captured, projected, queried with HogQL. The `$set` they
// carry (as posthog-js sends them) marks the person, and the survey's internal targeting flag
// stops matching someone who answered or dismissed it.

let it_: Isolated
let surveyId: string
let internalKey: string

beforeAll(async () => {
  it_ = await isolatedBurrow('survey responses')
  const created = await it_.call('POST', `/api/projects/${it_.project.id}/surveys/`, {
    name: 'Feedback',
    type: 'popover',
    questions: [{ type: 'open', question: 'Anything to tell us?' }],
    start_date: '2026-01-01T00:00:00Z',
  })
  expect(created.status).toBe(201)
  surveyId = created.body.id
  internalKey = created.body.internal_targeting_flag.key
})

const surveyEvent = (event: string, distinctId: string, extra: Record<string, unknown>) => ({
  event,
  distinct_id: distinctId,
  timestamp: '2026-02-01T10:00:00.000Z',
  properties: { $survey_id: surveyId, $survey_name: 'Feedback', $survey_iteration: null, ...extra },
})

describe('survey responses', () => {
  it('are events queryable through HogQL, and answering or dismissing switches the targeting flag off', async () => {
    const questionId = 'q-1'
    const batch = [
      surveyEvent('survey shown', 'shown-only', { $set: { $survey_last_seen_date: '2026-02-01T10:00:00Z' } }),
      surveyEvent('survey sent', 'answered', {
        $survey_questions: [{ id: questionId, question: 'Anything to tell us?', response: 'Faster charts' }],
        [`$survey_response_${questionId}`]: 'Faster charts',
        $survey_response: 'Faster charts',
        $survey_completed: true,
        $set: { [`$survey_responded/${surveyId}`]: true },
      }),
      surveyEvent('survey sent', 'answered-too', {
        $survey_response: 'Dark mode',
        $set: { [`$survey_responded/${surveyId}`]: true },
      }),
      surveyEvent('survey dismissed', 'dismissed', {
        $survey_partially_completed: false,
        $set: { [`$survey_dismissed/${surveyId}`]: true },
      }),
    ]
    const res = await fetch(`${it_.burrow.url}/batch/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: it_.project.api_token, batch }),
    })
    expect(res.status).toBe(200)

    const query = `SELECT properties.$survey_response AS response, count() AS n FROM events
      WHERE event = 'survey sent' AND properties.$survey_id = '${surveyId}'
      GROUP BY response ORDER BY response`
    const result = await untilProjected(
      // force_blocking: a poll must not be answered from the results cache of the previous one
      () =>
        it_.call('POST', `/api/projects/${it_.project.id}/query/`, {
          query: { kind: 'HogQLQuery', query },
          refresh: 'force_blocking',
        }),
      (r) => r.status === 200 && r.body.results.length === 2,
    )
    expect(result.body.results).toEqual([
      ['Dark mode', 1],
      ['Faster charts', 1],
    ])
    const perEvent = await it_.call('POST', `/api/projects/${it_.project.id}/query/`, {
      query: {
        kind: 'HogQLQuery',
        query: `SELECT event, count() FROM events WHERE properties.$survey_id = '${surveyId}' GROUP BY event ORDER BY event`,
      },
    })
    expect(perEvent.body.results).toEqual([
      ['survey dismissed', 1],
      ['survey sent', 2],
      ['survey shown', 1],
    ])

    // the person properties land, and /flags reads them (no request overrides here)
    const person = await untilProjected(
      () => it_.personOf('answered'),
      (p) => p[`$survey_responded/${surveyId}`] === true,
    )
    expect(person[`$survey_responded/${surveyId}`]).toBe(true)
    await untilProjected(
      () => it_.personOf('dismissed'),
      (p) => p[`$survey_dismissed/${surveyId}`] === true,
    )
    const flag = async (distinctId: string) =>
      (await post(it_.burrow.url, '/flags/?v=2', { token: it_.project.api_token, distinct_id: distinctId }))
        .body.flags[internalKey].enabled
    // /flags reads persons from a mirror the projector's change feed updates just after ClickHouse
    expect(
      await untilProjected(
        () => flag('answered'),
        (on) => on === false,
      ),
    ).toBe(false)
    expect(
      await untilProjected(
        () => flag('dismissed'),
        (on) => on === false,
      ),
    ).toBe(false)
    expect(await flag('shown-only')).toBe(true)
    expect(await flag('never-seen')).toBe(true)
  })
})

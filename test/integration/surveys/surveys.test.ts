import { beforeAll, describe, expect, it } from 'vitest'
import { createTestProject } from '../../harness/index.ts'
import { type Env, managementEnv } from '../../harness/management.ts'
import { post } from '../flags/helpers.ts'
import { until } from '../sdk/helpers.ts'

// Surveys as a management resource (PostHog's SurveyViewSet) and as posthog-js reads them.

let env: Env
const surveys = (p = env.project.id) => `/api/projects/${p}/surveys/`
const question = { type: 'open', question: 'What could we do better?' }

beforeAll(async () => {
  env = await managementEnv()
})

describe('survey management API', () => {
  it('creates a draft survey with question ids and its internal targeting flag (off until launched)', async () => {
    const r = await env.call('POST', surveys(), {
      name: 'NPS',
      description: 'internal notes',
      type: 'popover',
      questions: [question, { type: 'rating', question: 'How likely…?', scale: 10, id: 'keep-me' }],
      appearance: { backgroundColor: '#eeeeee' },
    })
    expect(r.status).toBe(201)
    expect(r.body).toMatchObject({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'NPS',
      description: 'internal notes',
      type: 'popover',
      schedule: 'once',
      linked_flag: null,
      targeting_flag: null,
      conditions: null,
      appearance: { backgroundColor: '#eeeeee' },
      start_date: null,
      end_date: null,
      archived: false,
      created_by: { id: 1 },
      enable_partial_responses: false,
    })
    expect(r.body.questions[0]).toEqual({ ...question, id: expect.stringMatching(/^[0-9a-f-]{36}$/) })
    expect(r.body.questions[1].id).toBe('keep-me')
    const internal = r.body.internal_targeting_flag
    expect(internal.key).toMatch(/^survey-targeting-[0-9a-f]{10}-custom$/)
    expect(internal.active).toBe(false)
    // _add_user_survey_interacted_filters: people who have neither dismissed nor answered it
    expect(internal.filters.groups).toEqual([
      {
        variant: null,
        rollout_percentage: 100,
        properties: [
          {
            key: `$survey_dismissed/${r.body.id}`,
            value: 'is_not_set',
            operator: 'is_not_set',
            type: 'person',
          },
          {
            key: `$survey_responded/${r.body.id}`,
            value: 'is_not_set',
            operator: 'is_not_set',
            type: 'person',
          },
        ],
      },
    ])
    expect(r.body.feature_flag_keys).toEqual([
      { key: 'linked_flag_key', value: null },
      { key: 'targeting_flag_key', value: null },
      { key: 'internal_targeting_flag_key', value: internal.key },
      { key: 'internal_response_sampling_flag_key', value: null },
    ])
    const got = await env.call('GET', `${surveys()}${r.body.id}/`)
    expect(got.status).toBe(200)
    expect(got.body.questions).toEqual(r.body.questions)
  })

  it.each([
    [{ questions: [{ type: 'open' }] }, 'questions', 'Question text is required'],
    [{ questions: 'nope' }, 'questions', 'Questions must be a list of objects'],
    [{ questions: [{ ...question, choices: ['a', ' '] }] }, 'questions', 'Question choices cannot be empty'],
    [
      { questions: [{ type: 'link', question: 'Read', link: 'http://example.com' }] },
      'questions',
      'Link must be a URL with one of these schemes: [https, mailto]',
    ],
    [
      { questions: [{ type: 'link', question: 'Mail', link: 'mailto:nobody' }] },
      'questions',
      'Invalid mailto link. Please enter a valid mailto link (e.g., mailto:example@domain.com).',
    ],
    [
      {
        questions: [
          {
            ...question,
            validation: [
              { type: 'min_length', value: 9 },
              { type: 'max_length', value: 3 },
            ],
          },
        ],
      },
      'questions',
      'Minimum length cannot be greater than maximum length',
    ],
    [
      { appearance: { shuffleQuestions: true }, questions: [{ ...question, branching: { type: 'end' } }] },
      null,
      'Question shuffling and question branching cannot be used together. Please disable one of these features.',
    ],
    [
      { appearance: { surveyPopupDelaySeconds: -1 } },
      'appearance',
      'Survey popup delay seconds must be a positive integer',
    ],
    [{ conditions: ['url'] }, 'conditions', 'Conditions must be an object'],
    [
      { type: 'external_survey', conditions: { url: 'https://x.io' } },
      'conditions',
      'The following condition fields are not allowed for external surveys: url',
    ],
    [{ linked_flag_id: 987654 }, null, 'Feature Flag with this ID does not exist'],
    [
      { conditions: { linkedFlagVariant: 'blue' } },
      null,
      'linkedFlagVariant can only be used when a linked_flag_id is specified',
    ],
    [
      { targeting_flag_filters: { groups: [{ properties: [], rollout_percentage: 100 }] } },
      null,
      'Invalid operation: User targeting rolls out to everyone. If you want to roll out to everyone, delete this targeting',
    ],
  ])('refuses %j with PostHog’s message', async (extra, attr, detail) => {
    const r = await env.call('POST', surveys(), { name: `bad ${Math.random()}`, type: 'popover', ...extra })
    expect(r.status).toBe(400)
    expect(r.body).toMatchObject({ type: 'validation_error', attr, detail })
  })

  it('refuses an unknown type, a missing name and a name already taken in the project', async () => {
    expect((await env.call('POST', surveys(), { name: 'x', type: 'billboard' })).status).toBe(400)
    const noName = await env.call('POST', surveys(), { type: 'popover' })
    expect(noName.body).toMatchObject({ attr: 'name', code: 'required' })
    expect((await env.call('POST', surveys(), { name: 'Taken', type: 'api' })).status).toBe(201)
    const again = await env.call('POST', surveys(), { name: 'Taken', type: 'api' })
    expect(again.status).toBe(400)
    expect(again.body).toMatchObject({ code: 'unique', detail: 'There is already a survey with this name.' })
    // another project may use the name
    expect((await env.call('POST', surveys(env.other.id), { name: 'Taken', type: 'api' })).status).toBe(201)
  })

  it('lets exactly one of concurrent creates with one name through', async () => {
    const results = await Promise.all(
      Array.from({ length: 6 }, () => env.call('POST', surveys(), { name: 'Race', type: 'popover' })),
    )
    expect(results.map((r) => r.status).sort()).toEqual([201, 400, 400, 400, 400, 400])
    const listed = await env.call('GET', `${surveys()}?search=race`)
    expect(listed.body.count).toBe(1)
  })

  it('launches, lists for posthog-js, renames, archives and deletes a survey with its flags', async () => {
    const project = await createTestProject('survey lifecycle')
    await env.call('PATCH', `/api/projects/${project.id}/`, { surveys_opt_in: true })
    const first = await env.call('POST', surveys(project.id), {
      name: 'First',
      type: 'popover',
      questions: [question],
    })
    const second = await env.call('POST', surveys(project.id), { name: 'Second', type: 'api' })
    const id = first.body.id
    const launched = await env.call('PATCH', `${surveys(project.id)}${id}/`, {
      start_date: '2026-01-02T03:04:05Z',
    })
    expect(launched.status).toBe(200)
    expect(launched.body.start_date).toBe('2026-01-02T03:04:05.000Z')
    expect(launched.body.internal_targeting_flag.active).toBe(true)

    const rename = await env.call('PATCH', `${surveys(project.id)}${id}/`, { name: 'Second' })
    expect(rename.status).toBe(400)
    expect(rename.body.detail).toBe('There is already another survey with this name.')
    expect((await env.call('PATCH', `${surveys(project.id)}${id}/`, { name: 'Renamed' })).status).toBe(200)
    // the old name is free again
    expect((await env.call('POST', surveys(project.id), { name: 'First', type: 'api' })).status).toBe(201)

    const publicList = await fetch(`${env.burrow.url}/api/surveys/?token=${project.api_token}`, {
      headers: { origin: 'https://shop.example.com' },
    })
    expect(publicList.status).toBe(200)
    expect(publicList.headers.get('access-control-allow-origin')).toBe('*')
    const listed = (await publicList.json()) as { surveys: Record<string, unknown>[]; survey_config: unknown }
    expect(listed.survey_config).toBeNull()
    const shown = listed.surveys.find((s) => s.id === id)
    // SurveyAPISerializer: no description, flag keys only when the survey has such a flag
    expect(shown).toEqual({
      id,
      name: 'Renamed',
      type: 'popover',
      internal_targeting_flag_key: first.body.internal_targeting_flag.key,
      questions: first.body.questions,
      conditions: null,
      appearance: null,
      start_date: '2026-01-02T03:04:05.000Z',
      end_date: null,
      current_iteration: null,
      current_iteration_start_date: null,
      schedule: 'once',
      enable_partial_responses: false,
    })
    expect(listed.surveys.map((s) => s.name).sort()).toEqual(['First', 'Renamed', 'Second'])
    // the remote config carries the same list once surveys are on
    const config = await until(
      async () => (await fetch(`${env.burrow.url}/array/${project.api_token}/config`)).json(),
      (c) => Array.isArray(c.surveys) && c.surveys.length === 3,
    )
    expect(config.surveys.find((s: { id: string }) => s.id === id)).toEqual(shown)

    // the running survey's flag is served by /flags to someone who has not answered it
    const flags = await post(env.burrow.url, '/flags/?v=2', {
      token: project.api_token,
      distinct_id: 'new-visitor',
    })
    expect(flags.body.flags[first.body.internal_targeting_flag.key].enabled).toBe(true)
    const answered = await post(env.burrow.url, '/flags/?v=2', {
      token: project.api_token,
      distinct_id: 'answered',
      person_properties: { [`$survey_responded/${id}`]: true },
    })
    expect(answered.body.flags[first.body.internal_targeting_flag.key].enabled).toBe(false)

    const archived = await env.call('PATCH', `${surveys(project.id)}${second.body.id}/`, { archived: true })
    expect(archived.body.archived).toBe(true)
    const after = await until(
      async () =>
        (await (await fetch(`${env.burrow.url}/api/surveys/?token=${project.api_token}`)).json()) as {
          surveys: { id: string }[]
        },
      (l) => l.surveys.length === 2,
    )
    expect(after.surveys.map((s) => s.id)).not.toContain(second.body.id)
    expect((await env.call('GET', `${surveys(project.id)}?archived=true`)).body.count).toBe(1)

    const del = await env.call('DELETE', `${surveys(project.id)}${id}/`)
    expect(del.status).toBe(204)
    expect((await env.call('GET', `${surveys(project.id)}${id}/`)).status).toBe(404)
    const flag = await env.call(
      'GET',
      `/api/projects/${project.id}/feature_flags/${first.body.internal_targeting_flag.id}/`,
    )
    expect(flag.body.deleted).toBe(true)
  })

  it('makes a targeting flag from targeting_flag_filters, which needs feature_flag:write too', async () => {
    const filters = {
      groups: [{ properties: [{ key: 'plan', value: ['pro'], type: 'person' }], rollout_percentage: 100 }],
    }
    const surveyOnly = await env.as(['survey:write'])
    const denied = await surveyOnly('POST', surveys(), {
      name: 'Pro only',
      type: 'popover',
      targeting_flag_filters: filters,
    })
    expect(denied.status).toBe(403)
    expect(denied.body.detail).toContain('feature_flag:write')
    const both = await env.as(['survey:write', 'feature_flag:write'])
    const r = await both('POST', surveys(), {
      name: 'Pro only',
      type: 'popover',
      targeting_flag_filters: filters,
    })
    expect(r.status).toBe(201)
    expect(r.body.targeting_flag.key).toMatch(/^survey-targeting-[0-9a-f]{10}$/)
    expect(r.body.targeting_flag.filters.groups[0].properties[0]).toMatchObject({
      key: 'plan',
      value: ['pro'],
    })
    const removed = await both('PATCH', `${surveys()}${r.body.id}/`, { remove_targeting_flag: true })
    expect(removed.body.targeting_flag).toBeNull()
  })

  it('checks scopes: read lists, only write changes; other projects are 404', async () => {
    const reader = await env.as(['survey:read'])
    expect((await reader('GET', surveys())).status).toBe(200)
    expect((await reader('POST', surveys(), { name: 'no', type: 'api' })).status).toBe(403)
    const none = await env.as(['feature_flag:read'])
    expect((await none('GET', surveys())).status).toBe(403)
    const elsewhere = await env.as(['survey:write'], [env.other.id])
    expect((await elsewhere('GET', surveys())).status).toBe(404)
    expect((await env.call('GET', `${surveys()}00000000-0000-4000-8000-000000000000/`)).status).toBe(404)
    expect((await env.call('GET', `${surveys()}not-a-uuid/`)).status).toBe(404)
  })

  it('answers the public list without a survey for an unknown token, and 401 without a token', async () => {
    const unknown = await fetch(`${env.burrow.url}/api/surveys/?token=phc_unknown`)
    expect(unknown.status).toBe(200)
    expect(await unknown.json()).toEqual({ surveys: [], survey_config: null })
    expect((await fetch(`${env.burrow.url}/api/surveys/`)).status).toBe(401)
  })
})

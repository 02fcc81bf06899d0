import { describe, expect, it } from 'vitest'
import { StoredSurvey } from '../../../src/surveys/document.ts'
import { internalTargetingFilters } from '../../../src/surveys/flags.ts'
import { checkSurvey, cleanBaseLanguage, cleanQuestions, SurveyInput } from '../../../src/surveys/validate.ts'

// Rules and messages of PostHog's SurveySerializerCreateUpdateOnly (products/surveys/backend/api/survey.py).

const thrown = (fn: () => unknown) => {
  try {
    fn()
  } catch (err) {
    return (err as { detail: string }).detail
  }
  return null
}

const survey = (extra: Record<string, unknown> = {}) =>
  StoredSurvey.parse({
    id: '11111111-1111-4111-8111-111111111111',
    team_id: 1,
    name: 's',
    type: 'popover',
    created_at: '2026-01-01T00:00:00Z',
    created_by: 1,
    ...extra,
  })

describe('cleanQuestions', () => {
  it('gives questions without an id one, and keeps given ids', () => {
    const [a, b] = cleanQuestions([
      { type: 'open', question: 'A?' },
      { type: 'open', question: 'B?', id: 'b' },
    ])!
    expect(a!.id).toMatch(/^[0-9a-f-]{36}$/)
    expect(b!.id).toBe('b')
  })

  it.each([
    [[{ question: '' }], 'Question text is required'],
    [[{ question: 5 }], 'Question text must be a string'],
    [[{ question: 'q', description: 3 }], 'Question description must be a string'],
    [[{ question: 'q', choices: 'a,b' }], 'Question choices must be a list of strings'],
    [[{ question: 'q', choices: ['a', 2] }], 'Question choices must be strings'],
    [
      [{ question: 'q', descriptionContentType: 'md' }],
      "Question descriptionContentType must be one of ['text', 'html']",
    ],
    [[{ question: 'q', link: 'https://' }], 'Link must be a URL with one of these schemes: [https, mailto]'],
    [
      [{ question: 'q', validation: [{ type: 'regex' }] }],
      'Validation rule type must be one of: min_length, max_length, email',
    ],
    [
      [{ question: 'q', validation: [{ type: 'max_length', value: 0 }] }],
      'Validation rule value for max_length must be a positive integer',
    ],
    [['q'], 'Questions must be a list of objects'],
  ])('refuses %j', (questions, message) => {
    expect(thrown(() => cleanQuestions(questions))).toBe(message)
  })

  it('accepts https and mailto links', () => {
    expect(cleanQuestions([{ question: 'q', link: 'https://posthog.com/x' }])).toHaveLength(1)
    expect(cleanQuestions([{ question: 'q', link: 'mailto:someone@example.com' }])).toHaveLength(1)
  })
})

describe('cleanBaseLanguage', () => {
  it('normalises BCP-47 codes and refuses sentinels', () => {
    expect(cleanBaseLanguage('es_MX')).toBe('es-mx')
    expect(cleanBaseLanguage(null)).toBe('en')
    expect(thrown(() => cleanBaseLanguage('default'))).toBe(
      "'default' is not a valid language code. Use a BCP-47 code like 'en' or 'es'.",
    )
    expect(thrown(() => cleanBaseLanguage('english'))).toContain('is not a valid language code')
  })
})

describe('checkSurvey', () => {
  const input = (v: Record<string, unknown>) => SurveyInput.parse(v)
  it('refuses targeting that rolls out to everyone, but not a condition with properties', () => {
    const everyone = { targeting_flag_filters: { groups: [{ properties: [], rollout_percentage: null }] } }
    expect(thrown(() => checkSurvey(survey(), input(everyone)))).toContain(
      'User targeting rolls out to everyone',
    )
    const some = {
      targeting_flag_filters: {
        groups: [{ properties: [{ key: 'a', value: 'b' }], rollout_percentage: 100 }],
      },
    }
    expect(thrown(() => checkSurvey(survey(), input(some)))).toBeNull()
  })

  it('refuses what external surveys cannot use', () => {
    const external = survey({
      type: 'external_survey',
      conditions: { events: { values: [{ name: 'x' }] }, deviceTypes: ['Mobile'] },
    })
    expect(thrown(() => checkSurvey(external, input({ type: 'external_survey' })))).toBe(
      'The following condition fields are not allowed for external surveys: deviceTypes, events',
    )
  })
})

describe('internalTargetingFilters', () => {
  it('adds the wait-period group as PostHog does', () => {
    const f = internalTargetingFilters(survey({ conditions: { seenSurveyWaitPeriodInDays: 7 } })) as {
      groups: { properties: { key: string; operator: string; value: string }[] }[]
    }
    expect(f.groups).toHaveLength(2)
    expect(f.groups[0]!.properties.map((p) => `${p.key} ${p.operator}`)).toEqual([
      '$survey_dismissed/11111111-1111-4111-8111-111111111111 is_not_set',
      '$survey_responded/11111111-1111-4111-8111-111111111111 is_not_set',
      '$survey_last_seen_date is_not_set',
    ])
    expect(f.groups[1]!.properties[2]).toEqual({
      key: '$survey_last_seen_date',
      value: '7d',
      operator: 'is_date_before',
      type: 'person',
    })
  })
})

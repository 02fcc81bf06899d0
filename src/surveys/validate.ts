import { randomUUID } from 'node:crypto'
import { z } from 'zod'
import { ValidationError } from '../http/errors.ts'
import { SURVEY_SCHEDULES, SURVEY_TYPES, type StoredSurvey } from './document.ts'

// The body of POST/PATCH …/surveys/: PostHog's SurveySerializerCreateUpdateOnly rules and messages
// (products/surveys/backend/api/survey.py). HTML sanitising (nh3) is not done: the text is kept
// as written, and posthog-js sanitises what it renders as HTML.

const dateTime = z
  .string()
  .refine((s) => !Number.isNaN(Date.parse(s)), 'Datetime has wrong format.')
  .transform((s) => new Date(s).toISOString())

const json = z.record(z.string(), z.unknown())

export const SurveyInput = z.object({
  name: z.string().min(1).max(400).optional(),
  description: z.string().optional(),
  type: z.enum(SURVEY_TYPES).optional(),
  schedule: z
    .enum(SURVEY_SCHEDULES, { error: 'Schedule must be one of: once, recurring, always' })
    .nullable()
    .optional(),
  linked_flag_id: z.number().int().nullable().optional(),
  linked_insight_id: z.number().int().nullable().optional(),
  targeting_flag_id: z.number().int().nullable().optional(),
  targeting_flag_filters: json.nullable().optional(),
  remove_targeting_flag: z.boolean().nullable().optional(),
  questions: z.unknown().optional(),
  conditions: z.unknown().optional(),
  appearance: z.unknown().optional(),
  start_date: dateTime.nullable().optional(),
  end_date: dateTime.nullable().optional(),
  archived: z.boolean().optional(),
  responses_limit: z.number().int().min(0).nullable().optional(),
  iteration_count: z.number().int().min(0).max(500).nullable().optional(),
  iteration_frequency_days: z.number().int().min(1).max(365).nullable().optional(),
  enable_partial_responses: z.boolean().nullable().optional(),
  enable_iframe_embedding: z.boolean().nullable().optional(),
  base_language: z.string().max(20).nullable().optional(),
  translations: z.unknown().optional(),
})
export type SurveyInput = z.output<typeof SurveyInput>

const LINK_SCHEMES = ['https', 'mailto']
const MAILTO = /^mailto:[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}$/
const BCP47 = /^[a-z]{2,3}(-[a-z0-9]{2,8}){0,3}$/
const REJECTED_LANGUAGES = new Set(['default', 'original', 'base'])

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

const fail = (attr: string | null, detail: string): never => {
  throw new ValidationError(detail, attr)
}

function checkLink(link: string): void {
  let scheme = ''
  let host = ''
  try {
    const u = new URL(link)
    scheme = u.protocol.replace(/:$/, '')
    host = u.host
  } catch {
    // not a URL at all: reported as an unsupported scheme, as PostHog's urlparse would
  }
  if (!LINK_SCHEMES.includes(scheme)) {
    fail('questions', `Link must be a URL with one of these schemes: [${LINK_SCHEMES.join(', ')}]`)
  }
  if (scheme === 'mailto' && !MAILTO.test(link)) {
    fail(
      'questions',
      'Invalid mailto link. Please enter a valid mailto link (e.g., mailto:example@domain.com).',
    )
  }
  if (scheme === 'https' && !host) fail('questions', 'Invalid HTTPS URL. Please enter a valid HTTPS link.')
}

function checkChoices(choices: unknown[]): void {
  for (const c of choices) {
    if (typeof c !== 'string') fail('questions', 'Question choices must be strings')
    if (!(c as string).trim()) fail('questions', 'Question choices cannot be empty')
  }
}

function checkValidationRules(rules: unknown): void {
  if (!Array.isArray(rules)) fail('questions', 'Question validation must be a list of validation rules')
  const types = ['min_length', 'max_length', 'email']
  for (const rule of rules as unknown[]) {
    if (!isObject(rule)) fail('questions', 'Each validation rule must be an object')
    const r = rule as Record<string, unknown>
    if (!types.includes(r.type as string)) {
      fail('questions', `Validation rule type must be one of: ${types.join(', ')}`)
    }
    if ((r.type === 'min_length' || r.type === 'max_length') && r.value != null) {
      if (!Number.isInteger(r.value) || (r.value as number) <= 0) {
        fail('questions', `Validation rule value for ${r.type} must be a positive integer`)
      }
    }
  }
  const list = rules as Record<string, unknown>[]
  const min = list.find((r) => r.type === 'min_length')?.value
  const max = list.find((r) => r.type === 'max_length')?.value
  if (typeof min === 'number' && typeof max === 'number' && min > max) {
    fail('questions', 'Minimum length cannot be greater than maximum length')
  }
}

/** validate_questions: a list of objects with question text; each gets an id if it has none. */
export function cleanQuestions(value: unknown): Record<string, unknown>[] | null {
  if (value === null) return null
  if (!Array.isArray(value)) return fail('questions', 'Questions must be a list of objects')
  return value.map((raw) => {
    if (!isObject(raw)) return fail('questions', 'Questions must be a list of objects')
    if (!raw.question) fail('questions', 'Question text is required')
    if (typeof raw.question !== 'string') fail('questions', 'Question text must be a string')
    for (const [field, message] of [
      ['description', 'Question description must be a string'],
      ['buttonText', 'Question buttonText must be a string'],
      ['lowerBoundLabel', 'Question lowerBoundLabel must be a string'],
      ['upperBoundLabel', 'Question upperBoundLabel must be a string'],
    ] as const) {
      if (raw[field] && typeof raw[field] !== 'string') fail('questions', message)
    }
    if (raw.choices) {
      if (!Array.isArray(raw.choices)) fail('questions', 'Question choices must be a list of strings')
      checkChoices(raw.choices as unknown[])
    }
    const contentType = raw.descriptionContentType
    if (contentType && contentType !== 'text' && contentType !== 'html') {
      fail('questions', "Question descriptionContentType must be one of ['text', 'html']")
    }
    if (raw.link) {
      if (typeof raw.link !== 'string') fail('questions', 'link must be a string')
      checkLink(raw.link as string)
    }
    if (raw.validation !== undefined && raw.validation !== null) checkValidationRules(raw.validation)
    // ensure_question_ids: responses are keyed by question id, so every question has one
    return { ...raw, id: typeof raw.id === 'string' && raw.id ? raw.id : randomUUID() }
  })
}

/** validate_appearance: an object; popup delay not negative; whiteLabel a boolean. */
export function cleanAppearance(value: unknown): Record<string, unknown> | null {
  if (value === null) return null
  if (!isObject(value)) return fail('appearance', 'Appearance must be an object')
  const ct = value.thankYouMessageDescriptionContentType
  if (ct && ct !== 'text' && ct !== 'html') {
    fail('appearance', "thankYouMessageDescriptionContentType must be one of ['text', 'html']")
  }
  const delay = value.surveyPopupDelaySeconds
  if (typeof delay === 'number' && delay < 0) {
    fail('appearance', 'Survey popup delay seconds must be a positive integer')
  }
  if (value.whiteLabel !== undefined && value.whiteLabel !== null && typeof value.whiteLabel !== 'boolean') {
    fail('appearance', 'whiteLabel must be a boolean')
  }
  return value
}

export function cleanConditions(value: unknown): Record<string, unknown> | null {
  if (value === null) return null
  if (!isObject(value)) return fail('conditions', 'Conditions must be an object')
  return value
}

export function cleanBaseLanguage(value: string | null): string {
  if (value === null || !value.trim()) return 'en'
  const normalized = value.trim().toLowerCase().replaceAll('_', '-')
  if (REJECTED_LANGUAGES.has(normalized)) {
    fail('base_language', `'${value}' is not a valid language code. Use a BCP-47 code like 'en' or 'es'.`)
  }
  if (!BCP47.test(normalized)) {
    fail(
      'base_language',
      `'${value}' is not a valid language code. Use BCP-47 codes like 'en', 'es', or 'es-MX'.`,
    )
  }
  return normalized
}

export function cleanTranslations(value: unknown): Record<string, unknown> | null {
  if (value === null) return null
  if (!isObject(value)) return fail('translations', 'Translations must be an object')
  for (const [lang, t] of Object.entries(value)) {
    if (!isObject(t)) fail('translations', `Translation for '${lang}' must be an object`)
  }
  return value
}

/** The conditions PostHog refuses on surveys shown outside the app (type external_survey). */
const EXTERNAL_CONDITION_FIELDS = [
  'url',
  'urlMatchType',
  'selector',
  'seenSurveyWaitPeriodInDays',
  'linkedFlagVariant',
  'deviceTypes',
  'deviceTypesMatchType',
]

/** Cross-field rules of validate(): shuffling vs branching, external surveys, full-rollout targeting. */
export function checkSurvey(next: StoredSurvey, input: SurveyInput): void {
  const filters = input.targeting_flag_filters
  if (filters) {
    const groups = Array.isArray(filters.groups) ? (filters.groups as Record<string, unknown>[]) : []
    const fullRollout = groups.some(
      (g) =>
        (g.rollout_percentage === 100 || g.rollout_percentage == null) &&
        (!Array.isArray(g.properties) || g.properties.length === 0),
    )
    if (fullRollout) {
      fail(
        null,
        'Invalid operation: User targeting rolls out to everyone. If you want to roll out to everyone, delete this targeting',
      )
    }
  }
  if (next.appearance?.shuffleQuestions && next.questions?.some((q) => q.branching != null)) {
    fail(
      null,
      'Question shuffling and question branching cannot be used together. Please disable one of these features.',
    )
  }
  if (input.type === 'external_survey') {
    if (input.linked_flag_id != null)
      fail('linked_flag_id', 'linked_flag_id is not allowed for external surveys')
    if (filters != null)
      fail('targeting_flag_filters', 'targeting_flag_filters is not allowed for external surveys')
    const c = next.conditions ?? {}
    const bad = EXTERNAL_CONDITION_FIELDS.filter((f) => c[f] != null)
    for (const f of ['actions', 'events']) {
      const v = c[f]
      if (isObject(v) && Array.isArray(v.values) && v.values.length > 0) bad.push(f)
    }
    if (bad.length) {
      fail(
        'conditions',
        `The following condition fields are not allowed for external surveys: ${bad.join(', ')}`,
      )
    }
    if (next.appearance?.surveyPopupDelaySeconds != null) {
      fail('appearance', 'surveyPopupDelaySeconds is not allowed for external surveys')
    }
  }
}

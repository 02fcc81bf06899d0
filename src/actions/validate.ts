import { ValidationError } from '../http/errors.ts'
import { regexProblem } from '../flags/regex.ts'
import type { PropertyFilter, PropertyGroup } from '../queries/insights/common/schema.ts'
import type { ActionStep } from './document.ts'
import { stepCondition } from './expr.ts'
import { InvalidSelector, selectorRegex } from './selector.ts'

// What an action may not be saved with: a selector that cannot be matched, a pattern RE2 cannot
// compile (regexes are linear-time, as for flags: src/flags/regex.ts), a filter on a cohort that is
// not one of the project's. Each refusal names the field, e.g. `steps.0.url`.

/** Whether cohort `id` is a live cohort of the project. */
export type CohortExists = (id: number) => boolean

const REGEX_OPERATORS = new Set(['regex', 'not_regex'])

function checkRegex(pattern: string, attr: string): void {
  const problem = regexProblem(pattern)
  if (problem) throw new ValidationError(problem, attr)
}

/** Checks property filters (a list or PostHog's AND/OR groups) wherever they appear. */
export function checkFilters(
  filters: (PropertyFilter | PropertyGroup)[],
  attr: string,
  cohortExists: CohortExists,
): void {
  filters.forEach((f, i) => {
    const at = `${attr}.${i}`
    if ('values' in f && Array.isArray(f.values) && !(f as PropertyFilter).key) {
      checkFilters((f as PropertyGroup).values, `${at}.values`, cohortExists)
      return
    }
    const filter = f as PropertyFilter
    const values = Array.isArray(filter.value) ? filter.value : [filter.value]
    if (REGEX_OPERATORS.has(filter.operator ?? '')) {
      for (const v of values) if (typeof v === 'string') checkRegex(v, `${at}.value`)
    }
    if (filter.type === 'element' && filter.key === 'selector') {
      for (const v of values) {
        try {
          selectorRegex(String(v ?? ''))
        } catch (err) {
          if (err instanceof InvalidSelector)
            throw new ValidationError(`Invalid selector: ${err.message}`, `${at}.value`)
          throw err
        }
      }
    }
    if (
      filter.type === 'cohort' ||
      filter.type === 'static-cohort' ||
      filter.type === 'precalculated-cohort'
    ) {
      const id = Number(values[0])
      if (!Number.isSafeInteger(id) || !cohortExists(id)) {
        throw new ValidationError(
          `Cohort ${String(values[0])} does not exist in this project.`,
          `${at}.value`,
        )
      }
    }
  })
}

/** Throws a ValidationError naming the step and field of the first problem. */
export function checkSteps(steps: ActionStep[], cohortExists: CohortExists): void {
  steps.forEach((step, i) => {
    const at = `steps.${i}`
    if (step.selector) {
      try {
        checkRegex(selectorRegex(step.selector), `${at}.selector`)
      } catch (err) {
        if (err instanceof InvalidSelector)
          throw new ValidationError(`Invalid selector: ${err.message}`, `${at}.selector`)
        throw err
      }
    }
    if (step.url && step.url_matching === 'regex') checkRegex(step.url, `${at}.url`)
    if (step.href && step.href_matching === 'regex') checkRegex(step.href, `${at}.href`)
    if (step.text && step.text_matching === 'regex') checkRegex(step.text, `${at}.text`)
    if (step.properties) checkFilters(step.properties, `${at}.properties`, cohortExists)
    try {
      stepCondition(step)
    } catch (err) {
      if (err instanceof ValidationError) throw new ValidationError(err.detail, `${at}.properties`)
      throw err
    }
  })
}

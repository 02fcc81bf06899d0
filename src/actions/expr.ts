// An action as a HogQL condition on one event, as PostHog writes it (posthog/hogql/property.py
// action_to_expr): the steps ORed, each step's conditions ANDed. The condition reads only the
// events table's own fields (and person_id, for person and cohort filters), so it can stand for
// `matchesAction(…)` in any SELECT over events, and for an ActionsNode in every insight.
import { and, or, propertiesCondition, propertyField, str } from '../queries/insights/common/index.ts'
import type { Action, ActionStep, Matching } from './document.ts'
import { selectorRegex, tagNameRegex } from './selector.ts'

const AUTOCAPTURE = '$autocapture'

/**
 * `field` compared with `value` as the step says (`fallback` when it says nothing). PostHog's
 * operators: `contains` is LIKE for URLs and ILIKE for elements, and the value's % and _ stay
 * wildcards.
 */
function matched(
  field: string,
  value: string,
  how: Matching | null | undefined,
  fallback: Matching,
  like: 'LIKE' | 'ILIKE',
): string {
  switch (how ?? fallback) {
    case 'regex':
      return `ifNull(${field} =~ ${str(value)}, 0)`
    case 'contains':
      return `ifNull(${field} ${like} ${str(`%${value}%`)}, 0)`
    case 'exact':
      return `ifNull(${field} = ${str(value)}, 0)`
  }
}

/** The HogQL condition of one step; throws InvalidSelector for a selector it cannot match. */
export function stepCondition(step: ActionStep): string {
  const parts: string[] = []
  if (step.event) parts.push(`event = ${str(step.event)}`)
  if (step.event === AUTOCAPTURE) {
    if (step.selector) parts.push(`elements_chain =~ ${str(selectorRegex(step.selector))}`)
    if (step.tag_name !== null && step.tag_name !== undefined) {
      parts.push(`elements_chain =~ ${str(tagNameRegex(step.tag_name))}`)
    }
    if (step.href !== null && step.href !== undefined) {
      parts.push(matched('elements_chain_href', step.href, step.href_matching, 'exact', 'ILIKE'))
    }
    if (step.text !== null && step.text !== undefined) {
      parts.push(
        `arrayExists(x -> ${matched('x', step.text, step.text_matching, 'exact', 'ILIKE')}, elements_chain_texts)`,
      )
    }
  }
  if (step.url)
    parts.push(matched(propertyField('$current_url'), step.url, step.url_matching, 'contains', 'LIKE'))
  if (step.properties?.length) {
    const props = propertiesCondition(step.properties)
    if (props) parts.push(props)
  }
  return and(parts)
}

/** The action's condition; an action without steps matches no event. */
export function actionCondition(action: Pick<Action, 'steps'>): string {
  if (action.steps.length === 0) return '0'
  return or(action.steps.map(stepCondition))
}

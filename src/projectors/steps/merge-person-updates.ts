import { type CapturedEvent, withTopLevelUpdates } from '../../jetstream/messages.ts'
import { ok, type StepResult } from './results.ts'

/**
 * Merges the person updates an SDK sent at the top level of the event (`$set`, `$set_once`: posthog-js
 * `identify(id, props)`, `capture(name, props, {$set})`) into `properties.$set` / `properties.$set_once`,
 * as PostHog's ingestion does before plugins run (nodejs/src/utils/event.ts, sanitizeEvent): a key
 * present in both takes the top-level value. The top-level fields are gone afterwards.
 */
export function mergePersonUpdates(e: CapturedEvent): StepResult<CapturedEvent> {
  const { $set, $set_once, ...rest } = e
  if ($set === undefined && $set_once === undefined) return ok(e)
  return ok({ ...rest, properties: withTopLevelUpdates(e.properties, $set, $set_once) })
}

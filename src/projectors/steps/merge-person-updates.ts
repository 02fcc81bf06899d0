import { type CapturedEvent, withTopLevelUpdates } from '../../jetstream/messages.ts'
import { ok, type StepResult } from './results.ts'

/**
 * Merges the person updates an SDK sent at the top level of the event (`$set`, `$set_once`: posthog-js
 * `identify(id, props)`, `capture(name, props, {$set})`) into `properties.$set` / `properties.$set_once`,
 * as PostHog's ingestion does before plugins run (nodejs/src/utils/event.ts, sanitizeEvent): a key
 * present in both takes the top-level value. The top-level fields are gone afterwards.
 */
export function mergePersonUpdates(e: CapturedEvent): StepResult<CapturedEvent> {
  // Checked before the destructuring: most events have neither, and the rest copy is not free.
  if (e.$set === undefined && e.$set_once === undefined) return ok(e)
  const { $set, $set_once, ...rest } = e
  return ok({ ...rest, properties: withTopLevelUpdates(e.properties, $set, $set_once) })
}

import type { CapturedEvent } from '../../jetstream/messages.ts'
import type { PluginEvent } from '../../plugins/types.ts'
import type { TeamPipeline } from '../batch.ts'
import { DROPS, drop, ok, type StepResult } from './results.ts'

/**
 * Runs an event through its project's plugins: the event they return, or a drop when one returns
 * null. `quiet`: the event's row is already written, so the plugins run for the identity state only.
 */
export async function runPlugins(
  pipeline: TeamPipeline,
  event: CapturedEvent,
  quiet: boolean,
): Promise<StepResult<CapturedEvent>> {
  const result = await pipeline(event, { quiet })
  return result === null ? drop(DROPS.plugin) : ok(pluginOutput(event, result))
}

/**
 * What a plugin may change: the event name, the distinct id and the properties. The uuid, timestamps
 * and log position stay those of the log, which reconciliation and ordering rely on.
 */
export function pluginOutput(e: CapturedEvent, r: PluginEvent): CapturedEvent {
  const name = typeof r.event === 'string' && r.event.length > 0 ? r.event : e.event
  const id = typeof r.distinct_id === 'string' && r.distinct_id.length > 0 ? r.distinct_id : e.distinct_id
  const props = r.properties && typeof r.properties === 'object' ? r.properties : e.properties
  if (name === e.event && id === e.distinct_id && props === e.properties) return e
  return { ...e, event: name, distinct_id: id, properties: props }
}

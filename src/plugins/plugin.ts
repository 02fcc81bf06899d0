import type { z } from 'zod'
import type { LogType, PluginEvent } from './types.ts'
import type { WebhookDispatcher } from './webhook-dispatcher.ts'

/** What a running plugin may use besides the event. */
export interface PluginContext {
  log(type: LogType, message: string): void
  webhooks: WebhookDispatcher
  geoip: (ip: string) => Record<string, unknown>
}

/** A built-in pipeline step: returns the event (changed copies only, never mutated) or null to drop it. */
export interface BuiltinPlugin<S extends z.ZodTypeAny = z.ZodTypeAny> {
  id: number
  name: string
  description: string
  config: S
  process(
    event: PluginEvent,
    config: z.infer<S>,
    ctx: PluginContext,
  ): PluginEvent | null | Promise<PluginEvent | null>
}

export const definePlugin = <S extends z.ZodTypeAny>(p: BuiltinPlugin<S>): BuiltinPlugin<S> => p

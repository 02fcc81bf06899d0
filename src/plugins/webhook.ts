import { z } from 'zod'
import { definePlugin } from './plugin.ts'

// POSTs each matching event as JSON to a URL. The event continues down the pipeline unchanged
// at once; delivery and its retries happen in the background (webhook-dispatcher.ts).

export const webhookPlugin = definePlugin({
  id: 3,
  name: 'webhook',
  description: 'POSTs matching events to a URL, retrying with exponential backoff.',
  config: z.object({
    url: z
      .string()
      .url()
      .refine((u) => /^https?:\/\//i.test(u), 'must be an http(s) URL'),
    /** event names to send; empty or absent sends every event */
    events: z.array(z.string().min(1)).default([]),
    headers: z.record(z.string(), z.string()).default({}),
    max_attempts: z.number().int().min(1).max(10).default(5),
    initial_backoff_ms: z.number().int().min(1).max(60_000).default(1000),
    timeout_ms: z.number().int().min(100).max(60_000).default(10_000),
  }),
  process(event, config, ctx) {
    if (config.events.length > 0 && !config.events.includes(event.event)) return event
    ctx.webhooks.send({
      url: config.url,
      headers: config.headers,
      maxAttempts: config.max_attempts,
      initialBackoffMs: config.initial_backoff_ms,
      timeoutMs: config.timeout_ms,
      label: `event ${event.uuid} (${event.event})`,
      log: ctx.log,
      body: {
        uuid: event.uuid,
        event: event.event,
        distinct_id: event.distinct_id,
        team_id: event.team_id,
        timestamp: event.timestamp,
        properties: event.properties,
      },
    })
    return event
  },
})

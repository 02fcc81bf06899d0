import { z } from 'zod'
import { PropertyFilterSchema } from '../queries/insights/common/schema.ts'

// Actions as PostHog stores them (posthog/models/action/action.py, posthog/api/action.py): a name
// and steps, any of which an event may match (the steps are ORed). A step holds conditions that
// must all hold: the event name; for $autocapture, the clicked element (CSS selector, tag, text,
// link) in `elements_chain`; the page URL; and property filters.

export const MATCHING = ['contains', 'regex', 'exact'] as const
export type Matching = (typeof MATCHING)[number]

const text = z.string().nullable().optional()
const matching = z.enum(MATCHING).nullable().optional()

export const ActionStepSchema = z
  .object({
    event: text,
    properties: z.array(PropertyFilterSchema).nullable().optional(),
    selector: text,
    tag_name: text,
    text,
    text_matching: matching,
    href: text,
    href_matching: matching,
    url: text,
    url_matching: matching,
  })
  .strip()
export type ActionStep = z.infer<typeof ActionStepSchema>

/** The stored action (`action.<team>.<id>` in the actions bucket). */
export const ActionDoc = z.object({
  id: z.number().int(),
  team_id: z.number().int(),
  name: z.string().nullable(),
  description: z.string(),
  tags: z.array(z.string()),
  post_to_slack: z.boolean(),
  slack_message_format: z.string(),
  steps: z.array(ActionStepSchema),
  deleted: z.boolean(),
  pinned_at: z.string().nullable(),
  created_at: z.string(),
  created_by: z.number().int().nullable(),
  updated_at: z.string(),
})
export type Action = z.infer<typeof ActionDoc>

/** What a client may write (POST, PATCH: only the fields given change). */
export const ActionWriteSchema = z
  .object({
    name: z.string().max(400).nullable().optional(),
    description: z.string().max(10_000).optional(),
    tags: z.array(z.string().max(255)).max(100).optional(),
    post_to_slack: z.boolean().optional(),
    slack_message_format: z.string().max(1200).optional(),
    steps: z.array(ActionStepSchema).max(200).optional(),
    deleted: z.boolean().optional(),
    pinned_at: z.string().nullable().optional(),
  })
  .passthrough()
export type ActionWrite = z.infer<typeof ActionWriteSchema>

import { z } from 'zod'
import type { PersonResponse } from '../queries/insights/actors/persons.ts'
import type { SessionSummary } from './store.ts'

// A session recording as PostHog's API shows it (SessionRecordingSerializer's fields). What Burrow
// does not compute is present with PostHog's empty value: activity_score null, has_summary false,
// summary_outcome null, external_references [].

export const PersonBody = z.object({
  id: z.string(),
  uuid: z.string(),
  name: z.string(),
  distinct_ids: z.array(z.string()),
  properties: z.record(z.string(), z.unknown()),
  created_at: z.string(),
  is_identified: z.boolean(),
})

export const RecordingBody = z.object({
  id: z.string(),
  distinct_id: z.string().nullable(),
  viewed: z.boolean(),
  viewers: z.array(z.string()),
  recording_duration: z.number().int(),
  active_seconds: z.number(),
  inactive_seconds: z.number(),
  start_time: z.string().nullable(),
  end_time: z.string().nullable(),
  click_count: z.number().int(),
  keypress_count: z.number().int(),
  mouse_activity_count: z.number().int(),
  console_log_count: z.number().int(),
  console_warn_count: z.number().int(),
  console_error_count: z.number().int(),
  start_url: z.string().nullable(),
  person: PersonBody.nullable(),
  retention_period_days: z.number().int().nullable(),
  expiry_time: z.string().nullable(),
  recording_ttl: z.number().int().nullable(),
  snapshot_source: z.string().nullable(),
  snapshot_library: z.string().nullable(),
  ongoing: z.boolean(),
  activity_score: z.number().nullable(),
  has_summary: z.boolean(),
  summary_outcome: z.unknown().nullable(),
  external_references: z.array(z.unknown()),
  matches_filters: z.boolean(),
})
export type RecordingBody = z.infer<typeof RecordingBody>

const DAY_MS = 86_400_000
/** a session whose last event is more recent than this may still be recording */
const ONGOING_MS = 5 * 60_000

/** The first day boundary (UTC) at which retention removes a recording last active at `endMs`. */
export function expiryOf(endMs: number, days: number): number {
  const due = endMs + days * DAY_MS
  return due - (due % DAY_MS) + DAY_MS
}

export interface RecordingExtras {
  person: PersonResponse | null
  viewed: boolean
  viewers: string[]
  /** in a playlist: kept whatever its age */
  pinned: boolean
  retentionDays: number
  nowMs: number
}

export function recordingBody(s: SessionSummary, x: RecordingExtras): RecordingBody {
  const active = s.active_ms / 1000
  const kept = x.pinned || x.retentionDays <= 0
  const expiry = kept ? null : expiryOf(s.end_ms, x.retentionDays)
  return {
    id: s.session_id,
    distinct_id: s.distinct_id || null,
    viewed: x.viewed,
    viewers: x.viewers,
    recording_duration: s.duration,
    active_seconds: active,
    inactive_seconds: Math.max(0, s.duration - active),
    start_time: new Date(s.start_ms).toISOString(),
    end_time: new Date(s.end_ms).toISOString(),
    click_count: s.click_count,
    keypress_count: s.keypress_count,
    mouse_activity_count: s.mouse_activity_count,
    console_log_count: s.console_log_count,
    console_warn_count: s.console_warn_count,
    console_error_count: s.console_error_count,
    start_url: s.first_url || null,
    person: x.person,
    retention_period_days: kept ? null : x.retentionDays,
    expiry_time: expiry === null ? null : new Date(expiry).toISOString(),
    recording_ttl: expiry === null ? null : Math.max(0, Math.ceil((expiry - x.nowMs) / DAY_MS)),
    snapshot_source: s.snapshot_source || 'web',
    snapshot_library: s.snapshot_library || null,
    ongoing: s.end_ms > x.nowMs - ONGOING_MS,
    activity_score: null,
    has_summary: false,
    summary_outcome: null,
    external_references: [],
    matches_filters: true,
  }
}

/** A recording known by id only (e.g. pinned to a playlist before any snapshot arrived). */
export function unknownRecordingBody(id: string): RecordingBody {
  return {
    id,
    distinct_id: null,
    viewed: false,
    viewers: [],
    recording_duration: 0,
    active_seconds: 0,
    inactive_seconds: 0,
    start_time: null,
    end_time: null,
    click_count: 0,
    keypress_count: 0,
    mouse_activity_count: 0,
    console_log_count: 0,
    console_warn_count: 0,
    console_error_count: 0,
    start_url: null,
    person: null,
    retention_period_days: null,
    expiry_time: null,
    recording_ttl: null,
    snapshot_source: null,
    snapshot_library: null,
    ongoing: false,
    activity_score: null,
    has_summary: false,
    summary_outcome: null,
    external_references: [],
    matches_filters: true,
  }
}

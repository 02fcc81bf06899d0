// JetStream streams and KV buckets Burrow needs, applied idempotently at start and by `burrow migrate`.
// Subjects of EVENTS: events.<lane>.<partition>, lane = live | historical | overflow; the partition is
// a hash of team_id, so a team's events (and so each person's) stay in one ordered partition.

export const EVENTS_STREAM = 'EVENTS'
export const DLQ_STREAM = 'DEAD_LETTERS'
/**
 * Team spread (PROJECTOR_TEAM_SPREAD): events whose person the identity stage decided, for the row
 * writers; `resolved.<partition>` (src/projectors/resolved.ts). Kept a week: only what the row writers
 * have not written yet matters, and a rebuild reads EVENTS, never this.
 */
export const RESOLVED_STREAM = 'RESOLVED'
export const RESOLVED_PREFIX = 'resolved'
export const LANES = ['live', 'historical', 'overflow'] as const
export type Lane = (typeof LANES)[number]

export const eventsSubject = (lane: Lane, partition: number) => `events.${lane}.${partition}`

export interface StreamDef {
  name: string
  subjects: string[]
  /** Seconds of history JetStream keeps; 0 keeps everything (the log is the source of truth). */
  maxAgeSeconds: number
  /** Bytes JetStream keeps, oldest messages removed first; 0 = no limit. */
  maxBytes?: number
  duplicateWindowSeconds: number
}

/** Seconds within which the EVENTS stream drops a message whose id it already stored. */
export const EVENTS_DUPLICATE_WINDOW_SECONDS = 120

export const streams = (opts: { eventsMaxAgeSeconds: number; eventsMaxBytes?: number }): StreamDef[] => [
  {
    name: EVENTS_STREAM,
    subjects: ['events.>'],
    maxAgeSeconds: opts.eventsMaxAgeSeconds,
    maxBytes: opts.eventsMaxBytes ?? 0,
    duplicateWindowSeconds: EVENTS_DUPLICATE_WINDOW_SECONDS,
  },
  { name: DLQ_STREAM, subjects: ['dlq.>'], maxAgeSeconds: 30 * 24 * 3600, duplicateWindowSeconds: 120 },
  {
    name: RESOLVED_STREAM,
    subjects: [`${RESOLVED_PREFIX}.>`],
    maxAgeSeconds: 7 * 24 * 3600,
    duplicateWindowSeconds: 120,
  },
]

export interface BucketDef {
  name: string
  history: number
  ttlSeconds: number
}

export const BUCKETS = {
  /** organizations, projects, users, hashed API keys */
  config: { name: 'burrow_config', history: 5, ttlSeconds: 0 },
  flags: { name: 'burrow_flags', history: 5, ttlSeconds: 0 },
  identity: { name: 'burrow_identity', history: 1, ttlSeconds: 0 },
  queryStatus: { name: 'burrow_query_status', history: 1, ttlSeconds: 3600 },
  queryCache: { name: 'burrow_query_cache', history: 1, ttlSeconds: 24 * 3600 },
  /** session recording playlists and their recordings */
  playlists: { name: 'burrow_playlists', history: 5, ttlSeconds: 0 },
  /** plugin configs: the per-project pipeline steps the projector runs */
  pluginConfigs: { name: 'burrow_plugin_configs', history: 5, ttlSeconds: 0 },
  /** surveys (`survey.<team>.<id>`) and their per-project name claims */
  surveys: { name: 'burrow_surveys', history: 5, ttlSeconds: 0 },
  /**
   * which projector process owns which partition (`lease.<p>`) and who is alive (`member.<id>`),
   * with PROJECTOR_PARTITION_LEASES; an entry not renewed for the TTL is gone (its owner died)
   */
  projectorLeases: { name: 'burrow_projector_leases', history: 1, ttlSeconds: 10 },
  /** early access features (`feature.<team>.<id>`) and their flag links */
  earlyAccess: { name: 'burrow_early_access', history: 5, ttlSeconds: 0 },
  /** experiments (`experiment.<team>.<id>`) and their per-project id sequence */
  experiments: { name: 'burrow_experiments', history: 5, ttlSeconds: 0 },
  /** saved insights, dashboards (their tiles inside) and sharing configurations (src/dashboards) */
  dashboards: { name: 'burrow_dashboards', history: 5, ttlSeconds: 0 },
  /** cohort definitions and their calculation state (`cohort.<team>.<id>`) */
  cohorts: { name: 'burrow_cohorts', history: 5, ttlSeconds: 0 },
  /** action definitions (`action.<team>.<id>`) */
  actions: { name: 'burrow_actions', history: 5, ttlSeconds: 0 },
} as const satisfies Record<string, BucketDef>

import { z } from 'zod'

const port = z.coerce.number().int().min(0).max(65535)
const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes')

/** A comma-separated list (empty entries dropped), `fallback` when the variable is unset. */
const list = (fallback = '') =>
  z
    .string()
    .default(fallback)
    .transform((s) =>
      s
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean),
    )

export const ROLES = ['capture', 'api', 'projector', 'all'] as const
export type Role = (typeof ROLES)[number]

// Every setting Burrow reads from the environment. Defaults are documented in README.md.
export const EnvSchema = z.object({
  PORT: port.default(8000),
  HOST: z.string().min(1).default('127.0.0.1'),
  NATS_URL: z
    .string()
    // several URLs, comma-separated, name members of one cluster
    .regex(
      /^(nats|tls|ws|wss):\/\/[^\s,]+(,(nats|tls|ws|wss):\/\/[^\s,]+)*$/,
      'must be nats:// URLs, comma-separated',
    )
    .optional(),
  CLICKHOUSE_URL: z.string().url().optional(),
  // Cluster mode (docs/scaling.md): every shard's HTTP URL, for the statements that must run on each
  // shard's local tables (deletes, retention, materialized columns). Unset on one server.
  CLICKHOUSE_SHARD_URLS: list().pipe(z.array(z.string().url('must be http(s) URLs, comma-separated'))),
  CLICKHOUSE_DATABASE: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a plain identifier')
    .default('burrow'),
  DATA_DIR: z.string().min(1).default('.data'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  ROLE: z.enum(ROLES).default('all'),
  EMBEDDED_NATS_PORT: port.default(0),
  EMBEDDED_CLICKHOUSE_HTTP_PORT: port.default(0),
  EMBEDDED_CLICKHOUSE_TCP_PORT: port.default(0),
  AUTO_INSTALL: bool.default(true),
  CAPTURE_MAX_BODY_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(20 * 1024 * 1024),
  CAPTURE_MAX_EVENTS_PER_REQUEST: z.coerce.number().int().min(1).default(20_000),
  CAPTURE_CHUNK_EVENTS: z.coerce.number().int().min(1).max(100_000).default(1000),
  CAPTURE_ACK_TIMEOUT_MS: z.coerce.number().int().positive().default(5000),
  TRUSTED_PROXIES: list(),
  // The URL clients reach this server at (scheme, host, optional path prefix): `next` links of paged
  // answers are built from it; unset, from the request's Host (X-Forwarded-Host only from TRUSTED_PROXIES).
  PUBLIC_URL: z.string().url().optional(),
  // /metrics on a listener of its own (cluster-wide figures are for operators); unset: on PORT.
  METRICS_PORT: port.optional(),
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  // Slow clients: the whole request (headers and body) must arrive within HTTP_REQUEST_TIMEOUT_MS,
  // the headers within HTTP_HEADERS_TIMEOUT_MS; a connection silent for HTTP_IDLE_TIMEOUT_MS closes.
  HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(1000).default(30_000),
  HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(1000).default(10_000),
  HTTP_IDLE_TIMEOUT_MS: z.coerce.number().int().min(1000).default(120_000),
  CORS_PUBLIC_ORIGINS: list('*'),
  CORS_API_ORIGINS: list(),
  OVERFLOW_EVENTS_PER_SECOND: z.coerce.number().positive().default(1000),
  LOG_PARTITIONS: z.coerce.number().int().min(1).max(256).default(4),
  PROJECTOR_BATCH_SIZE: z.coerce.number().int().min(1).default(100),
  PROJECTOR_MAX_WAIT_MS: z.coerce.number().int().min(1).default(200),
  // Role all: projectors in a supervised child process, on the second core (src/runtime/projector-process.ts).
  PROJECTOR_PROCESS: bool.default(true),
  // several projector processes share the partitions through leases (src/projectors/partition-leases.ts)
  PROJECTOR_PARTITION_LEASES: bool.default(false),
  // one project's events projected by several processes: an ordered identity stage per partition and
  // parallel row writers (docs/scaling.md, "One project's events over many partitions"); implies leases
  PROJECTOR_TEAM_SPREAD: bool.default(false),
  API_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(1200),
  FLAGS_QUOTA_PER_MINUTE: z.coerce.number().int().min(0).default(0),
  QUERY_MAX_EXECUTION_SECONDS: z.coerce.number().int().positive().default(60),
  QUERY_MAX_RESULT_ROWS: z.coerce.number().int().positive().default(100_000),
  // the largest answer (ClickHouse's JSON, bytes) a query may return; one row can be gigabytes
  QUERY_MAX_RESULT_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(256 * 1024 * 1024),
  // Query admission (docs/query.md): ClickHouse's per-query memory cap, and how many queries may
  // run at once in one api process, in all, per project and per personal API key.
  QUERY_MAX_MEMORY_BYTES: z.coerce.number().int().positive().default(2_000_000_000),
  QUERY_MAX_CONCURRENT: z.coerce.number().int().positive().default(16),
  QUERY_MAX_CONCURRENT_PER_PROJECT: z.coerce.number().int().positive().default(8),
  QUERY_MAX_CONCURRENT_PER_KEY: z.coerce.number().int().positive().default(4),
  // User HogQL is compiled in worker threads, each compile within this budget.
  QUERY_COMPILE_WORKERS: z.coerce.number().int().min(1).max(16).default(2),
  QUERY_COMPILE_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  // Auto-materialization (src/queries/hot-properties.ts, docs/query.md): every interval, event
  // properties whose queries spent at least MIN_SECONDS of ClickHouse time get a column, up to MAX_COLUMNS.
  AUTO_MATERIALIZE: bool.default(true),
  AUTO_MATERIALIZE_INTERVAL_SECONDS: z.coerce.number().positive().default(3600),
  AUTO_MATERIALIZE_MIN_SECONDS: z.coerce.number().min(0).default(60),
  AUTO_MATERIALIZE_MAX_COLUMNS: z.coerce.number().int().min(0).default(20),
  // dynamic cohorts are calculated again this long after their last calculation (relative windows
  // such as "in the last 30 days" drift); each error in a row doubles the wait (src/cohorts)
  COHORT_RECALCULATE_MINUTES: z.coerce.number().positive().default(60),
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: bool.default(false),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().positive().default(15_000),
  SHUTDOWN_DRAIN_MS: z.coerce.number().int().min(0).default(0),
  // Retention (0 = keep forever). The log is the source of truth: a replay rebuilds only what it still holds.
  LOG_MAX_AGE_DAYS: z.coerce.number().min(0).default(0),
  LOG_MAX_BYTES: z.coerce.number().int().min(0).default(0),
  EVENTS_RETENTION_DAYS: z.coerce.number().int().min(0).default(0),
  PLUGIN_LOG_RETENTION_DAYS: z.coerce.number().int().min(0).default(0),
  RETENTION_INTERVAL_SECONDS: z.coerce.number().int().min(1).default(3600),
  // Session recordings (docs/recordings.md): days kept (recordings in a playlist are kept), the /s/ body
  // limit (PostHog's 25 MB), and how long the RECORDINGS stream keeps the log (0 = forever).
  RECORDINGS_RETENTION_DAYS: z.coerce.number().int().min(0).default(30),
  RECORDINGS_MAX_BODY_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(25 * 1024 * 1024),
  RECORDINGS_LOG_MAX_AGE_DAYS: z.coerce.number().min(0).default(0),
})

export type Config = z.infer<typeof EnvSchema>

export class ConfigError extends Error {
  constructor(readonly issues: { variable: string; message: string }[]) {
    super(`invalid configuration: ${issues.map((i) => `${i.variable}: ${i.message}`).join('; ')}`)
    this.name = 'ConfigError'
  }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Empty strings mean "not set", the way shells and compose files usually leave them.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''))
  const parsed = EnvSchema.safeParse(present)
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((i) => ({ variable: String(i.path[0] ?? '?'), message: i.message })),
    )
  }
  return parsed.data
}

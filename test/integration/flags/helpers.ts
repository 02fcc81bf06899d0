// Shared pieces of the flag integration tests: Burrow with only the parts flags need (capture for
// the SDKs' $feature_flag_called events, flag evaluation, the API), and small HTTP helpers.
import { gzipSync } from 'node:zlib'
import { apiComponent } from '../../../src/runtime/api-routes.ts'
import { captureComponent } from '../../../src/capture/index.ts'
import { loadConfig } from '../../../src/config/env.ts'
import { flagsComponent } from '../../../src/flags/index.ts'
import { createLogger } from '../../../src/observability/logger.ts'
import { type RunningBurrow, startBurrow } from '../../../src/runtime/start.ts'
import type { ClickHouseClient } from '../../../src/clickhouse/client.ts'
import type { NatsConnection } from '../../../src/jetstream/connection.ts'
import { type PersonChanges, personChangesSubject } from '../../../src/persons/change-feed.ts'
import { afterFile, nats, stack, tempDir } from '../../harness/index.ts'

const running: RunningBurrow[] = []

export async function startFlagsBurrow(env: Record<string, string> = {}): Promise<RunningBurrow> {
  const s = stack()
  const config = loadConfig({
    NATS_URL: s.natsUrl,
    CLICKHOUSE_URL: s.clickhouseUrl,
    CLICKHOUSE_DATABASE: s.database,
    DATA_DIR: tempDir('burrow-flags-'),
    PORT: '0',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    API_RATE_LIMIT_PER_MINUTE: '0',
    ...env,
  })
  const burrow = await startBurrow(config, createLogger(config.LOG_LEVEL), [
    captureComponent,
    flagsComponent,
    apiComponent,
  ])
  running.push(burrow)
  return burrow
}

export async function stopFlagsBurrows(): Promise<void> {
  for (const b of running.splice(0).reverse()) await b.stop().catch(() => undefined)
}

export interface Reply {
  status: number
  headers: Headers
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- test convenience
  body: any
}

async function reply(res: Response): Promise<Reply> {
  const text = await res.text()
  let body: unknown
  try {
    body = text ? JSON.parse(text) : null
  } catch {
    body = text
  }
  return { status: res.status, headers: res.headers, body }
}

/** POSTs a JSON body (optionally gzipped) to an evaluation endpoint. */
export async function post(
  base: string,
  path: string,
  body: unknown,
  opts: { headers?: Record<string, string>; gzip?: boolean } = {},
): Promise<Reply> {
  const json = JSON.stringify(body)
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(opts.gzip ? { 'content-encoding': 'gzip' } : {}),
      ...opts.headers,
    },
    body: opts.gzip ? gzipSync(json) : json,
  })
  return reply(res)
}

/** A minimal flag body for the API: one condition set. */
export function flagInput(
  key: string,
  filters: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) {
  return { key, name: key, filters, ...extra }
}

/**
 * Writes a person with properties and its distinct ids straight into ClickHouse, then announces them
 * on the person change feed as the projector does after its writes (src/persons/change-feed.ts).
 */
export async function insertPerson(
  ch: ClickHouseClient,
  teamId: number,
  personId: string,
  distinctIds: string[],
  properties: Record<string, unknown>,
  version = 1,
): Promise<void> {
  await ch.insert({
    table: 'person',
    format: 'JSONEachRow',
    values: [
      {
        team_id: teamId,
        id: personId,
        created_at: '2024-01-01 00:00:00',
        properties: JSON.stringify(properties),
        is_identified: 1,
        is_deleted: 0,
        version,
      },
    ],
  })
  await ch.insert({
    table: 'person_distinct_id',
    format: 'JSONEachRow',
    values: distinctIds.map((d) => ({
      team_id: teamId,
      distinct_id: d,
      person_id: personId,
      is_deleted: 0,
      version,
    })),
  })
  const change: PersonChanges = {
    team_id: teamId,
    persons: [{ id: personId, version, deleted: false, properties }],
    distinct_ids: distinctIds.map((d) => ({ distinct_id: d, person_id: personId, version, deleted: false })),
  }
  const nc = await feedConnection()
  nc.publish(personChangesSubject(teamId), JSON.stringify(change))
  await nc.flush()
}

// One connection per test file (the harness closes it after the file, and forgets it here).
let feed: Promise<NatsConnection> | undefined
function feedConnection(): Promise<NatsConnection> {
  if (!feed) {
    feed = nats()
    afterFile(() => (feed = undefined))
  }
  return feed
}

export async function insertGroup(
  ch: ClickHouseClient,
  teamId: number,
  typeIndex: number,
  typeName: string,
  key: string,
  properties: Record<string, unknown>,
): Promise<void> {
  await ch.insert({
    table: 'group_type_mapping',
    format: 'JSONEachRow',
    values: [{ team_id: teamId, group_type: typeName, group_type_index: typeIndex, version: 1 }],
  })
  await ch.insert({
    table: 'groups',
    format: 'JSONEachRow',
    values: [
      {
        team_id: teamId,
        group_type_index: typeIndex,
        group_key: key,
        created_at: '2024-01-01 00:00:00',
        properties: JSON.stringify(properties),
        version: 1,
      },
    ],
  })
}

export async function waitFor(check: () => Promise<boolean> | boolean, timeoutMs: number): Promise<number> {
  const start = Date.now()
  for (;;) {
    if (await check()) return Date.now() - start
    if (Date.now() - start > timeoutMs) throw new Error(`condition not met within ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

/**
 * What /decide answers besides the flags for a project with PostHog's default settings: the
 * remote config fields (docs/sdk-compatibility.md), as PostHog's decide sends them.
 */
export const DECIDE_REMOTE_CONFIG = {
  captureDeadClicks: false,
  capturePerformance: { network_timing: true, web_vitals: false, web_vitals_allowed_metrics: null },
  autocapture_opt_out: false,
  autocaptureExceptions: false,
  analytics: { endpoint: '/i/v0/e/' },
  elementsChainAsString: true,
  errorTracking: { autocaptureExceptions: false, suppressionRules: [] },
  logs: { captureConsoleLogs: false },
  sessionRecording: false,
  sessionRecordingDisabledReason: 'not_enabled',
  heatmaps: false,
  conversations: false,
  surveys: false,
  productTours: false,
  defaultIdentifiedOnly: true,
  siteApps: [],
}

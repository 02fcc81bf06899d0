// What test files use to reach the shared throw-away servers started by global-setup.ts.
import { mkdtempSync } from 'node:fs'
import { join } from 'node:path'
import { inject } from 'vitest'
import { closers } from './closers.ts'
import { type ClickHouseFlavor, flavorLibrary, type OwnClickHouse, ownClickHouse } from './clickhouse.ts'
import { loadConfig } from '../../src/config/env.ts'
import { AccountStore } from '../../src/accounts/store.ts'
import { connectNats, type NatsConnection } from '../../src/jetstream/connection.ts'
import { pino } from 'pino'
import { createLogger, type Logger } from '../../src/observability/logger.ts'
import { type RunningBurrow, startBurrow } from '../../src/runtime/start.ts'
import { COMPONENTS } from '../../src/runtime/components.ts'
import type { Component } from '../../src/runtime/types.ts'
import { type ClickHouseClient, clickhouseClient } from '../../src/clickhouse/client.ts'
import { migrateClickHouse } from '../../src/clickhouse/migrate.ts'
import { TableAdmin } from '../../src/clickhouse/table-admin.ts'

/** Every component but the event projector (see startTestBurrow). */
export const WITHOUT_PROJECTOR = COMPONENTS.filter((c) => c.name !== 'projector')

export interface TestStack {
  natsUrl: string
  clickhouseUrl: string
  /** which ClickHouse this vitest project runs against, and its version() */
  clickhouse: { flavor: ClickHouseFlavor; version: string }
  database: string
  /** the run's temp dir; servers' data lives below it */
  dir: string
  bins: { nats: string }
}

declare module 'vitest' {
  export interface ProvidedContext {
    stack: TestStack
  }
}

export const stack = (): TestStack => inject('stack')

/**
 * A ClickHouse server of this test's own, of the run's flavor, for tests that stop or kill it
 * (stopping the shared one would disturb other files). Returns a starter: call it again after
 * stop()/kill() to bring the server back on the same URL and data.
 */
export function privateClickHouse(dataDir: string): Promise<() => Promise<OwnClickHouse>> {
  return ownClickHouse({ dataDir, flavor: stack().clickhouse.flavor })
}

/** The path of the libchdb this run's ClickHouse runs (its flavor's build), for tests that start servers themselves. */
export const runLibrary = (): Promise<string> => flavorLibrary(stack().clickhouse.flavor)

/** A new directory below this project's run dir, removed (with any server left in it) after the run. */
export const tempDir = (prefix = 'burrow-') => mkdtempSync(join(stack().dir, prefix))

/** Runs `fn` after the current test file's tests (with the harness's own closers, last first). */
export function afterFile(fn: () => Promise<unknown> | unknown): void {
  closers.push(async () => fn())
}

/** A client on the migrated test database; closed after the file's tests. */
export function clickhouse(): ClickHouseClient {
  const s = stack()
  const c = clickhouseClient(s.clickhouseUrl, s.database)
  closers.push(() => c.close())
  return c
}

/**
 * A freshly migrated database of this file's own on the shared ClickHouse, and a client on it;
 * both gone after the file's tests. For files that mutate `events` (ALTER … DELETE), which rewrites
 * every part of the table: in the shared database that is every other file's rows too.
 */
export async function ownDatabase(prefix: string): Promise<{ database: string; client: ClickHouseClient }> {
  const database = `${prefix}_${Date.now()}_${Math.floor(Math.random() * 1e6)}`
  const { client } = await migrateClickHouse(stack().clickhouseUrl, database)
  closers.push(async () => {
    await client.command({ query: `DROP DATABASE IF EXISTS ${database}` })
    await client.close()
  })
  return { database, client }
}

/**
 * Resolves once no mutation (ALTER … DELETE/UPDATE) of `table` in the client's database is still
 * running: mutations run in the background on every server version. Throws after `timeoutMs`.
 */
export async function mutationsDone(
  client: ClickHouseClient,
  table: string,
  timeoutMs = 60_000,
): Promise<void> {
  if (!(await TableAdmin.single(client).mutationsDone([table], timeoutMs)))
    throw new Error(`mutations of ${table} still running after ${timeoutMs} ms`)
}

export async function nats(): Promise<NatsConnection> {
  const nc = await connectNats(stack().natsUrl, 'burrow-test')
  closers.push(() => nc.close())
  return nc
}

/** A team id no other test file uses, for tests that write ClickHouse rows directly. */
export function uniqueTeamId(): number {
  return 1_000_000 + Math.floor(Math.random() * 2_000_000_000)
}

/** A real project (config bucket) of its own for this test file, optionally in a time zone. */
export async function createTestProject(name = 'test project', timezone?: string) {
  const store = await AccountStore.open(await nats())
  const first = await store.getProject(1)
  const org = first?.organization_id ?? (await store.createOrganization('test org')).id
  return store.createProject({ name, organization_id: org, ...(timezone ? { timezone } : {}) })
}

/**
 * Burrow in this process, on the shared servers, with a data dir of its own. `components`: all by
 * default; a file that needs no projection passes `WITHOUT_PROJECTOR` (the event projector would
 * otherwise take its share of every other file's unprojected events on the shared log, and its
 * shutdown waits for the batch in hand).
 */
export async function startTestBurrow(
  env: Record<string, string> = {},
  components: Component[] = COMPONENTS,
): Promise<RunningBurrow> {
  const s = stack()
  const config = loadConfig({
    NATS_URL: s.natsUrl,
    CLICKHOUSE_URL: s.clickhouseUrl,
    CLICKHOUSE_DATABASE: s.database,
    DATA_DIR: tempDir('burrow-data-'),
    PORT: '0',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    // projectors in this process, where tests can reach them (the child process: test/system)
    PROJECTOR_PROCESS: 'false',
    ...env,
  })
  const steps: ShutdownTimes = []
  const log = config.LOG_LEVEL === 'silent' ? shutdownStepLogger(steps) : createLogger(config.LOG_LEVEL)
  const started = performance.now()
  const burrow = await startBurrow(config, log, components)
  reportIfSlow('start', started)
  closers.push(async () => {
    const stopping = performance.now()
    await burrow.stop()
    reportIfSlow('stop', stopping, steps)
  })
  return burrow
}

/** When each shutdown step of a test Burrow began (performance.now()). */
type ShutdownTimes = { step: string; at: number }[]

/**
 * A logger that writes nothing and notes when each shutdown step begins (start.ts logs each one).
 * The hook sees a call before anything is serialized, so the silent default costs nothing more.
 */
function shutdownStepLogger(steps: ShutdownTimes): Logger {
  return pino({
    level: 'info',
    hooks: {
      logMethod(args) {
        const [fields, msg] = args as unknown[]
        if (msg === 'shutdown step' && typeof fields === 'object' && fields !== null) {
          steps.push({ step: String((fields as { step?: unknown }).step), at: performance.now() })
        }
      },
    },
  })
}

/**
 * Says on stderr, beside the file's name, that a Burrow under test was slow to start or stop, with
 * how long each shutdown step took. It found a stop that waited out a keep-alive timeout (70 s in CI;
 * src/http/server.ts closeHttpServer). A note, not a check: tests never assert timings.
 */
function reportIfSlow(what: 'start' | 'stop', since: number, steps: ShutdownTimes = []): void {
  const end = performance.now()
  if (end - since <= SLOW_BURROW_MS) return
  const timed = steps.map((s, i) => `${s.step} ${(((steps[i + 1]?.at ?? end) - s.at) / 1000).toFixed(1)} s`)
  console.warn(
    `[harness] a test Burrow took ${((end - since) / 1000).toFixed(1)} s to ${what}` +
      (timed.length ? ` (${timed.join(', ')})` : ''),
  )
}
const SLOW_BURROW_MS = 15_000

/** A personal API key of the default user (run startTestBurrow first, which creates that user). */
export async function createTestKey(scopes: string[], projects: number[] | null = null): Promise<string> {
  const store = await AccountStore.open(await nats())
  const { key } = await store.createPersonalKey({ user_id: 1, label: 'test', scopes, projects })
  return key
}

/** fetch with a personal API key and JSON body. */
export function api(base: string, key: string | null) {
  return async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    })
    const text = await res.text()
    let json: unknown = null
    try {
      json = text ? JSON.parse(text) : null
    } catch {}
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- test convenience
    return { status: res.status, headers: res.headers, body: json as any, text }
  }
}

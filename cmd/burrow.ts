import { Command, InvalidArgumentError, Option } from 'commander'
import { credentialsFile } from '../src/accounts/bootstrap.ts'
import { SCOPE_PATTERN } from '../src/accounts/documents.ts'
import { type Config, ConfigError, loadConfig, ROLES } from '../src/config/env.ts'
import { AccountStore } from '../src/accounts/store.ts'
import { connectNats, migrateJetStream } from '../src/jetstream/connection.ts'
import { createLogger, type Logger } from '../src/observability/logger.ts'
import type { RunningBurrow } from '../src/runtime/start.ts'
import { clickhouseLibrary } from '../src/stack/clickhouse-library.ts'
import { pingClickHouse } from '../src/stack/clickhouse-server.ts'
import { replayCommand } from '../src/projectors/replay-command.ts'
import { replayRecordingsCommand } from '../src/recordings/replay.ts'
import { readStackFile, startStack } from '../src/stack/index.ts'
import { type Binary, ensureBinaries } from '../src/stack/install.ts'
import { loadMaterialized, materializeProperty } from '../src/clickhouse/materialize.ts'
import { TableAdmin } from '../src/clickhouse/table-admin.ts'
import { migrateDeployment } from '../src/clickhouse/deployment.ts'
import { logLimits } from '../src/clickhouse/retention.ts'
import { registerClusterCommand } from './cluster.ts'

function config(overrides: Partial<Record<string, string>> = {}): Config {
  try {
    return loadConfig({ ...process.env, ...overrides })
  } catch (err) {
    if (err instanceof ConfigError) {
      for (const i of err.issues) console.error(`burrow: invalid ${i.variable}: ${i.message}`)
      process.exit(2)
    }
    throw err
  }
}

/**
 * Commands other than `start` use the servers of a running Burrow (DATA_DIR/stack.json) when they
 * answer, else the configured URLs, else an embedded stack started for the command alone.
 */
async function withStack<T>(
  cfg: Config,
  log: Logger,
  fn: (urls: { natsUrl: string; clickhouseUrl: string }) => Promise<T>,
): Promise<T> {
  const saved = readStackFile(cfg.DATA_DIR)
  if (!cfg.NATS_URL && !cfg.CLICKHOUSE_URL && saved) {
    const up = await pingClickHouse(saved.clickhouse_url).catch(() => false)
    if (up) {
      const nc = await connectNats(saved.nats_url).catch(() => undefined)
      if (nc) {
        await nc.close()
        return fn({ natsUrl: saved.nats_url, clickhouseUrl: saved.clickhouse_url })
      }
    }
  }
  const stack = await startStack(cfg, log)
  try {
    return await fn(stack)
  } finally {
    await stack.stop()
  }
}

async function withConfigStore<T>(cfg: Config, log: Logger, fn: (s: AccountStore) => Promise<T>): Promise<T> {
  return withStack(cfg, log, async ({ natsUrl }) => {
    const nc = await connectNats(natsUrl)
    try {
      await migrateJetStream(nc, logLimits(cfg))
      return await fn(await AccountStore.open(nc))
    } finally {
      await nc.drain()
    }
  })
}

const program = new Command()
  .name('burrow')
  .description('PostHog-compatible analytics backend on NATS JetStream and ClickHouse')
  .showHelpAfterError()

program
  .command('start')
  .description('run Burrow (capture, api and projectors; or one role)')
  .addOption(new Option('--role <role>', 'which part to run').choices(ROLES as unknown as string[]))
  .action(async (opts: { role?: string }) => {
    const cfg = config(opts.role ? { ROLE: opts.role } : {})
    const log = createLogger(cfg.LOG_LEVEL)
    // Handlers go in before anything starts, so a signal during start-up still shuts down cleanly.
    let starting: Promise<RunningBurrow | undefined> = Promise.resolve(undefined)
    let stopping = false
    const shutdown = async (signal: string) => {
      if (stopping) {
        log.warn({ signal }, 'second signal: exiting now')
        process.exit(1)
      }
      stopping = true
      log.info({ signal }, 'shutting down')
      const force = setTimeout(() => {
        log.error('shutdown timed out')
        process.exit(1)
      }, cfg.SHUTDOWN_TIMEOUT_MS)
      const running = await starting.catch(() => undefined)
      await running?.stop()
      clearTimeout(force)
      process.exit(0)
    }
    process.on('SIGINT', () => void shutdown('SIGINT'))
    process.on('SIGTERM', () => void shutdown('SIGTERM'))
    // Imported here, not at the top: it loads every feature (seconds of tsx on a slow machine),
    // which the other commands and --help do not need.
    const start = import('../src/runtime/start.ts').then(({ startBurrow }) => startBurrow(cfg, log))
    starting = start
    let burrow: RunningBurrow
    try {
      burrow = await start
    } catch (err) {
      log.fatal({ err }, 'start-up failed')
      console.error(`burrow: ${(err as Error).message}`)
      process.exit(1)
    }
    const c = burrow.credentials
    if (burrow.createdCredentials) {
      console.log(
        [
          '',
          'Burrow created a default project. Keep these keys (also in local-credentials.json):',
          `  project id:        ${c.project_id}`,
          `  project API key:   ${c.project_api_key}`,
          `  personal API key:  ${c.personal_api_key}`,
          '',
        ].join('\n'),
      )
    }
    console.log(
      `Burrow listening on ${burrow.url} (role ${cfg.ROLE}); credentials in ${credentialsFile(cfg.DATA_DIR)}`,
    )
  })

program
  .command('migrate')
  .description('apply the ClickHouse schema and the JetStream streams and buckets, then exit')
  .action(async () => {
    const cfg = config()
    const log = createLogger(cfg.LOG_LEVEL)
    await withStack(cfg, log, async ({ natsUrl, clickhouseUrl }) => {
      const nc = await connectNats(natsUrl)
      const js = await migrateJetStream(nc, logLimits(cfg))
      await nc.drain()
      const { applied, client } = await migrateDeployment({
        url: clickhouseUrl,
        database: cfg.CLICKHOUSE_DATABASE,
        shardUrls: cfg.CLICKHOUSE_SHARD_URLS,
        log,
      })
      await client.close()
      console.log(
        `clickhouse: ${applied.length ? `applied ${applied.join(', ')}` : 'up to date'}; ` +
          `jetstream: ${js.created.length ? `created ${js.created.join(', ')}` : 'up to date'}`,
      )
    })
  })

program
  .command('status')
  .description('print the NATS and ClickHouse URLs in use and whether they answer')
  .action(async () => {
    const cfg = config()
    const saved = readStackFile(cfg.DATA_DIR)
    const natsUrl = cfg.NATS_URL ?? saved?.nats_url
    const clickhouseUrl = cfg.CLICKHOUSE_URL ?? saved?.clickhouse_url
    if (!natsUrl || !clickhouseUrl) {
      console.log(`no stack recorded in ${cfg.DATA_DIR}/stack.json: run \`burrow start\` first`)
      process.exit(1)
    }
    const nats = await connectNats(natsUrl)
      .then(async (nc) => {
        await nc.close()
        return 'up'
      })
      .catch(() => 'down')
    const ch = (await pingClickHouse(clickhouseUrl).catch(() => false)) ? 'up' : 'down'
    const api = await fetch(`http://127.0.0.1:${cfg.PORT}/_health`, { signal: AbortSignal.timeout(2000) })
      .then((r) => (r.ok ? 'up' : `degraded (${r.status})`))
      .catch(() => 'down')
    console.log(`nats_url:       ${natsUrl} (${nats})`)
    console.log(`clickhouse_url: ${clickhouseUrl} (${ch})`)
    console.log(`burrow:         http://127.0.0.1:${cfg.PORT} (${api})`)
  })

const projects = program.command('projects').description('manage projects')
projects
  .command('create')
  .argument('<name>', 'project name')
  .description('create a project and print its id and project API key')
  .action(async (name: string) => {
    const cfg = config()
    const log = createLogger(cfg.LOG_LEVEL)
    await withConfigStore(cfg, log, async (store) => {
      const first = await store.getProject(1)
      if (!first) throw new Error('no default project yet: run `burrow start` once first')
      const p = await store.createProject({ name, organization_id: first.organization_id })
      console.log(JSON.stringify({ id: p.id, name: p.name, api_token: p.api_token }, null, 2))
    })
  })

const keys = program.command('keys').description('manage personal API keys')
keys
  .command('create')
  .description('create a personal API key and print it (shown once)')
  .option('--project <ids>', 'comma-separated project ids the key may reach (default: all)')
  .option('--scopes <list>', 'comma-separated scopes, e.g. query:read,person:read or *', '*')
  .option('--label <label>', 'a name for the key', 'cli')
  .option('--user <id>', 'owning user id', '1')
  .action(async (opts: { project?: string; scopes: string; label: string; user: string }) => {
    const scopes = opts.scopes
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
    const bad = scopes.filter((s) => !SCOPE_PATTERN.test(s))
    if (bad.length || scopes.length === 0) {
      console.error(`burrow: invalid scopes: ${bad.join(', ') || '(none)'}; use <resource>:read|write or *`)
      process.exit(2)
    }
    const projectIds = opts.project ? opts.project.split(',').map((s) => Number(s.trim())) : null
    if (projectIds?.some((n) => !Number.isInteger(n) || n <= 0)) {
      console.error('burrow: --project must be positive integer ids')
      process.exit(2)
    }
    const cfg = config()
    const log = createLogger(cfg.LOG_LEVEL)
    await withConfigStore(cfg, log, async (store) => {
      for (const id of projectIds ?? []) {
        if (!(await store.getProject(id))) throw new Error(`project ${id} does not exist`)
      }
      const { key, doc } = await store.createPersonalKey({
        user_id: Number(opts.user),
        label: opts.label,
        scopes,
        projects: projectIds,
      })
      console.log(key)
      console.error(`created key ${doc.id} (${doc.mask}) scopes=${scopes.join(',')}`)
    })
  })

keys
  .command('list')
  .description('list personal API keys (id, label, masked value, owner, scopes, projects); never the keys')
  .option('--user <id>', 'only the keys of this user id')
  .action(async (opts: { user?: string }) => {
    const cfg = config()
    const log = createLogger(cfg.LOG_LEVEL)
    await withConfigStore(cfg, log, async (store) => {
      const all = await store.listPersonalKeys()
      const shown = opts.user === undefined ? all : all.filter((k) => String(k.user_id) === opts.user)
      console.log(['id', 'label', 'key', 'user', 'scopes', 'projects', 'created_at'].join('\t'))
      for (const k of shown) {
        const projects = k.projects === null ? 'all' : k.projects.join(',')
        console.log([k.id, k.label, k.mask, k.user_id, k.scopes.join(','), projects, k.created_at].join('\t'))
      }
    })
  })

keys
  .command('revoke')
  .argument('<id>', 'the key id (first column of `burrow keys list`)')
  .description('revoke a personal API key: requests with it are refused from then on')
  .action(async (id: string) => {
    const cfg = config()
    const log = createLogger(cfg.LOG_LEVEL)
    await withConfigStore(cfg, log, async (store) => {
      if (!(await store.revokePersonalKey(id))) {
        console.error(`burrow: no personal API key with id ${id}`)
        process.exitCode = 1
        return
      }
      console.log(`revoked ${id}`)
    })
  })

program
  .command('replay')
  .description('rebuild the ClickHouse views from the log into fresh tables and swap them in (resumable)')
  .option('--project <id>', 'rebuild one project only')
  .option('--from <seq|time>', 'first stream sequence or time to replay')
  .option('--to <seq|time>', 'last sequence or time; the tables are then left unswapped')
  .option(
    '--batch-messages <n>',
    'log messages a batch holds at most (default 50000; a batch also ends at 16 MiB)',
    (v: string) => {
      const n = Number(v)
      if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('a whole number of at least 1')
      return n
    },
  )
  .action(async (opts: { project?: string; from?: string; to?: string; batchMessages?: number }) => {
    const cfg = config()
    const log = createLogger(cfg.LOG_LEVEL)
    await withStack(cfg, log, async ({ natsUrl, clickhouseUrl }) => {
      const { client } = await migrateDeployment({
        url: clickhouseUrl,
        database: cfg.CLICKHOUSE_DATABASE,
        shardUrls: cfg.CLICKHOUSE_SHARD_URLS,
        log,
      })
      // cluster mode: the fresh tables, copies and swaps go to every shard (docs/scaling.md)
      const admin = await TableAdmin.open(client, cfg.CLICKHOUSE_DATABASE, cfg.CLICKHOUSE_SHARD_URLS)
      try {
        const r = await replayCommand(opts, {
          natsUrl,
          ch: client,
          admin,
          log,
          batchSize: opts.batchMessages,
          partitions: cfg.LOG_PARTITIONS,
        })
        const recordings = await replayRecordingsCommand(opts, { ...cfg, natsUrl, ch: client, admin, log })
        console.log(JSON.stringify({ ...r, recordings }, null, 2))
      } finally {
        await admin.close()
        await client.close()
      }
    })
  })

program
  .command('import')
  .argument('<file>', "JSON lines or PostHog's CSV event export; - reads JSON lines from stdin")
  .description('load a historical migration through capture (resumable; rejected lines are reported)')
  .option('--format <jsonl|csv>', 'input format (default: by extension, .csv is CSV)')
  .option('--url <url>', 'Burrow to send to (default: BURROW_URL, else http://127.0.0.1:PORT)')
  .option('--token <key>', 'project API key (default: the one in DATA_DIR/local-credentials.json)')
  .option('--batch-size <n>', 'events per request', '1000')
  .option('--rejected <file>', 'where rejected lines go (default: <file>.rejected)')
  .option('--restart', 'ignore the checkpoint and import the file from the start')
  .action(async (file: string, opts: Record<string, string | boolean | undefined>) => {
    const cfg = config()
    const { importCommand } = await import('../src/import/command.ts')
    process.exitCode = await importCommand(file, opts, { dataDir: cfg.DATA_DIR, port: cfg.PORT })
  })

program
  .command('materialize')
  .argument('[property]', 'event property to materialize, e.g. $browser')
  .option('--list', 'list the materialized properties')
  .description('give a hot event property a column of its own; queries use it within 30 s')
  .action(async (property: string | undefined, opts: { list?: boolean }) => {
    const cfg = config()
    const log = createLogger(cfg.LOG_LEVEL)
    await withStack(cfg, log, async ({ clickhouseUrl }) => {
      const { client } = await migrateDeployment({
        url: clickhouseUrl,
        database: cfg.CLICKHOUSE_DATABASE,
        shardUrls: cfg.CLICKHOUSE_SHARD_URLS,
        log,
      })
      try {
        if (property) {
          const tables = await TableAdmin.open(client, cfg.CLICKHOUSE_DATABASE, cfg.CLICKHOUSE_SHARD_URLS)
          try {
            console.log(`${property} -> ${await materializeProperty(client, tables, property)}`)
          } finally {
            await tables.close()
          }
        }
        if (opts.list || !property) {
          for (const [p, c] of await loadMaterialized(client)) console.log(`${p}\t${c}`)
        }
      } finally {
        await client.close()
      }
    })
  })

program
  .command('setup-deps')
  .description(
    'install nats-server from Debian when missing (needs root) and the embedded ClickHouse when its build is not installed',
  )
  .option('--with-browser', 'also install chromium (for the SDK contract tests)')
  .action(async (opts: { withBrowser?: boolean }) => {
    const cfg = config()
    const wanted: Binary[] = ['nats-server', ...(opts.withBrowser ? (['chromium'] as const) : [])]
    const bins = ensureBinaries(wanted, {
      autoInstall: cfg.AUTO_INSTALL,
      log: createLogger(cfg.LOG_LEVEL),
    })
    const clickhouse = await clickhouseLibrary(undefined, (spec) => console.log(`installing ${spec}`))
    console.log(
      Object.entries({ ...bins, clickhouse })
        .map(([k, v]) => `${k}: ${v}`)
        .join('\n'),
    )
  })

registerClusterCommand(program, () => config())

program.parseAsync().catch((err: unknown) => {
  console.error(`burrow: ${err instanceof Error ? err.message : String(err)}`)
  process.exit(1)
})

// `burrow cluster up`: the scaled-out topology on one machine (src/stack/cluster.ts).
import { type Command, InvalidArgumentError } from 'commander'
import type { Config } from '../src/config/env.ts'
import { pino } from 'pino'
import { type RunningCluster, startCluster } from '../src/stack/cluster.ts'

const count = (max: number) => (v: string) => {
  const n = Number(v)
  if (!Number.isInteger(n) || n < 1 || n > max)
    throw new InvalidArgumentError(`a whole number from 1 to ${max}`)
  return n
}

interface UpOptions {
  nats: number
  clickhouseShards: number
  projectors: number
  capture: number
  teamSpread?: boolean
}

/** Adds `cluster up` to the CLI; `config` reads the environment (DATA_DIR, CLICKHOUSE_DATABASE, …). */
export function registerClusterCommand(program: Command, config: () => Config): void {
  const cluster = program.command('cluster').description('run a scaled-out Burrow on this machine')
  cluster
    .command('up')
    .description(
      'start NATS, ClickHouse shards, projectors, capture and api processes on loopback (data in DATA_DIR); ' +
        'prints one JSON line describing them once all answer; SIGINT/SIGTERM stops all',
    )
    .option('--nats <n>', 'nats-servers in the JetStream cluster', count(7), 3)
    .option('--clickhouse-shards <n>', 'clickhouse-servers, one shard each', count(16), 1)
    .option('--projectors <n>', 'projector processes', count(32), 2)
    .option('--capture <n>', 'capture processes', count(32), 2)
    .option(
      '--team-spread',
      "one project's events projected by several processes (PROJECTOR_TEAM_SPREAD=true, docs/scaling.md)",
    )
    .action(async (opts: UpOptions) => {
      const cfg = config()
      // stdout carries the one description line only; logs go to stderr
      const log = pino({ level: cfg.LOG_LEVEL, base: { service: 'burrow-cluster' } }, pino.destination(2))
      const state: { running?: RunningCluster } = {}
      let stopping = false
      const shutdown = async (signal: string) => {
        if (stopping) process.exit(1)
        stopping = true
        log.info({ signal }, 'cluster: stopping')
        // during start-up: stopped once startCluster returns (below), so no child is left behind
        if (!state.running) return
        await state.running.stop()
        process.exit(0)
      }
      process.on('SIGINT', () => void shutdown('SIGINT'))
      process.on('SIGTERM', () => void shutdown('SIGTERM'))
      const running = await startCluster({
        dataDir: cfg.DATA_DIR,
        nats: opts.nats,
        clickhouseShards: opts.clickhouseShards,
        projectors: opts.projectors,
        capture: opts.capture,
        database: cfg.CLICKHOUSE_DATABASE,
        partitions: cfg.LOG_PARTITIONS,
        env: opts.teamSpread ? { PROJECTOR_TEAM_SPREAD: 'true' } : undefined,
        log,
      })
      state.running = running
      if (stopping) {
        await running.stop()
        process.exit(0)
      }
      process.stdout.write(`${JSON.stringify(running.description)}\n`)
    })
}

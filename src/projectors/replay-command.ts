import type { ClickHouseClient } from '../clickhouse/client.ts'
import type { TableAdmin } from '../clickhouse/table-admin.ts'
import type { Logger } from '../observability/logger.ts'
import { type ReplayProgress, type ReplayResult, replay } from './replay.ts'

// `burrow replay`: the replay engine (replay.ts) with a progress line on stderr.

/** A `--from` / `--to` value: a stream sequence (digits) or a time (anything Date.parse reads). */
export function parsePosition(s: string | undefined): number | Date | undefined {
  if (s === undefined) return undefined
  if (/^\d+$/.test(s)) return Number(s)
  const t = Date.parse(s)
  if (!Number.isFinite(t)) throw new Error(`not a sequence or a time: ${s}`)
  return new Date(t)
}

/** The progress line of a replay, e.g. `replay build: seq 120/400, 9000 events, 3000 events/s, ETA 2s`. */
export function progressLine(p: ReplayProgress): string {
  const eta = p.etaSeconds === null ? '?' : `${p.etaSeconds}s`
  return (
    `replay ${p.phase}: seq ${p.position}/${p.end}, ${p.events} events, ` +
    `${p.eventsPerSecond} events/s, ETA ${eta}`
  )
}

/** Draws progress lines on a stream: redrawn in place on a terminal, one line each otherwise. */
export function progressView(out: NodeJS.WriteStream): { update(p: ReplayProgress): void; end(): void } {
  const tty = out.isTTY === true
  return {
    update: (p) => out.write(tty ? `\r${progressLine(p)}\x1b[K` : `${progressLine(p)}\n`),
    end: () => {
      if (tty) out.write('\n')
    },
  }
}

/** `burrow replay`: connects, replays with a progress line, returns the outcome. */
export async function replayCommand(
  args: { project?: string; from?: string; to?: string },
  env: {
    natsUrl: string
    ch: ClickHouseClient
    admin?: TableAdmin
    log: Logger
    /** messages a batch holds at most (default: the replay's, REPLAY_BATCH_MESSAGES) */
    batchSize?: number
    /** LOG_PARTITIONS (the leases' and team spread's durables are per partition) */
    partitions?: number
  },
): Promise<ReplayResult> {
  const { connectNats } = await import('../jetstream/connection.ts')
  const nc = await connectNats(env.natsUrl, 'burrow-replay')
  const view = progressView(process.stderr)
  try {
    const result = await replay({
      nc,
      ch: env.ch,
      admin: env.admin,
      log: env.log,
      project: args.project === undefined ? undefined : Number(args.project),
      from: parsePosition(args.from),
      to: parsePosition(args.to),
      batchSize: env.batchSize,
      partitions: env.partitions,
      progress: view.update,
    })
    view.end()
    return result
  } finally {
    await nc.drain()
  }
}

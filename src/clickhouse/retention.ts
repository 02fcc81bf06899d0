import type { Config } from '../config/env.ts'
import type { Logger } from '../observability/logger.ts'
import { retentionDrops } from '../observability/metrics.ts'
import type { Component } from '../runtime/types.ts'
import type { TableAdmin } from './table-admin.ts'

// Disks must not grow without bound. Two knobs: how much of the log JetStream keeps (max age / bytes
// of the EVENTS stream, applied by migrateJetStream), and how many days of rows ClickHouse keeps.
// Whole month partitions are dropped once all of the month is past the retention age (a month is
// kept while any of its rows is still young enough): a drop is immediate and rewrites nothing,
// where a TTL deletes rows in merges, at times the server chooses.

const DAY_MS = 24 * 3600 * 1000

/** The EVENTS stream limits of migrateJetStream. */
export function logLimits(config: Pick<Config, 'LOG_MAX_AGE_DAYS' | 'LOG_MAX_BYTES'>) {
  return {
    eventsMaxAgeSeconds: Math.round(config.LOG_MAX_AGE_DAYS * 24 * 3600),
    eventsMaxBytes: config.LOG_MAX_BYTES,
  }
}

export interface RetentionRule {
  /** a table partitioned by toYYYYMM(timestamp) */
  table: string
  days: number
}

export function retentionRules(
  config: Pick<Config, 'EVENTS_RETENTION_DAYS' | 'PLUGIN_LOG_RETENTION_DAYS'>,
): RetentionRule[] {
  return [
    { table: 'events', days: config.EVENTS_RETENTION_DAYS },
    { table: 'plugin_log_entries', days: config.PLUGIN_LOG_RETENTION_DAYS },
  ].filter((r) => r.days > 0)
}

/** Month partitions (`YYYYMM`) that end at or before `now - days`. */
export function expiredMonths(partitions: string[], days: number, now: Date): string[] {
  const cutoff = now.getTime() - days * DAY_MS
  return partitions.filter((p) => {
    const m = /^(\d{4})(\d{2})$/.exec(p)
    if (!m) return false
    const nextMonth = Date.UTC(Number(m[1]), Number(m[2]), 1)
    return nextMonth <= cutoff
  })
}

/**
 * Drops the expired partitions of each rule's table, where its rows are (in cluster mode on every
 * shard); returns what was dropped (a partition dropped on several shards is listed once).
 */
export async function dropExpiredPartitions(
  tables: TableAdmin,
  rules: RetentionRule[],
  now = new Date(),
  log?: Logger,
): Promise<{ table: string; partition: string }[]> {
  const dropped: { table: string; partition: string }[] = []
  for (const rule of rules) {
    const parts = await tables.partitions(rule.table)
    const expired = new Set(expiredMonths([...new Set(parts.map((p) => p.partition))], rule.days, now))
    for (const { home, partition } of parts.filter((p) => expired.has(p.partition))) {
      await tables.dropPartition(home, rule.table, partition)
    }
    for (const p of [...expired].sort()) {
      retentionDrops.inc({ table: rule.table })
      dropped.push({ table: rule.table, partition: p })
      log?.info({ table: rule.table, partition: p, days: rule.days }, 'retention: dropped partition')
    }
  }
  return dropped
}

/**
 * Runs the retention job in projector processes: at start, then every RETENTION_INTERVAL_SECONDS.
 * Several projector processes may run it; dropping a partition twice is harmless.
 */
export const retentionComponent: Component = {
  name: 'retention',
  roles: ['projector'],
  async start(rt) {
    const rules = retentionRules(rt.config)
    if (rules.length === 0) return undefined
    const log = rt.log.child({ component: 'retention' })
    let running: Promise<unknown> = Promise.resolve()
    const tick = () => {
      running = dropExpiredPartitions(rt.tables, rules, new Date(), log).catch((err) =>
        log.warn({ err }, 'retention: could not drop expired partitions (will retry)'),
      )
    }
    tick()
    const timer = setInterval(tick, rt.config.RETENTION_INTERVAL_SECONDS * 1000)
    timer.unref()
    return {
      async stop() {
        clearInterval(timer)
        await running
      },
    }
  },
}

import { CLICKHOUSE_CLUSTER, migrateClickHouseCluster } from '../../schema/cluster.ts'
import type { Logger } from '../observability/logger.ts'
import { type ClickHouseClient, clickhouseClient } from './client.ts'
import { migrateClickHouse } from './migrate.ts'
import { clusterFront } from './table-admin.ts'

/**
 * Applies the ClickHouse schema where this deployment keeps its tables, and returns the versions
 * applied and a client on `database` at `url`:
 * - with `shardUrls` (cluster mode, docs/scaling.md): the migrations on every shard's local
 *   database, then the Distributed tables and views over them (schema/cluster.ts), so an upgrade's
 *   new table or column reaches every shard and the front;
 * - otherwise on `url` alone. A database whose `events` is already Distributed is refused then
 *   (ConfigError naming CLICKHOUSE_SHARD_URLS): a new migration applied to the front would create
 *   a local table beside the Distributed ones, on one server only.
 */
export async function migrateDeployment(o: {
  url: string
  database: string
  shardUrls: string[]
  log?: Logger
  /** the migrations' directory (default: schema/clickhouse) */
  dir?: string
}): Promise<{ applied: string[]; client: ClickHouseClient }> {
  if (o.shardUrls.length > 0) {
    const applied = await migrateClickHouseCluster({
      shardUrls: o.shardUrls,
      database: o.database,
      cluster: CLICKHOUSE_CLUSTER,
      log: o.log,
      dir: o.dir,
    })
    return { applied, client: clickhouseClient(o.url, o.database) }
  }
  const probe = clickhouseClient(o.url)
  try {
    await clusterFront(probe, o.database, o.shardUrls)
  } finally {
    await probe.close()
  }
  return migrateClickHouse(o.url, o.database, o.log, o.dir)
}

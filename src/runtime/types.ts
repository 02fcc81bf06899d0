// The contract between the process that wires Burrow together (start.ts) and the parts it starts.
// A leaf module: it imports only types, so every component can depend on it without a cycle.
import type { ClickHouseClient } from '@clickhouse/client'
import type { AccountStore } from '../accounts/store.ts'
import type { TableAdmin } from '../clickhouse/table-admin.ts'
import type { Config } from '../config/env.ts'
import type { App } from '../http/server.ts'
import type { NatsConnection } from '../jetstream/connection.ts'
import type { Logger } from '../observability/logger.ts'

/** What every role's module receives: the connections and settings of this process. */
export interface Runtime {
  config: Config
  log: Logger
  nc: NatsConnection
  ch: ClickHouseClient
  /**
   * For queries users write (HogQL, insights, person lists): every query it sends carries
   * ClickHouse's per-query memory and time limits (QUERY_MAX_MEMORY_BYTES, QUERY_MAX_EXECUTION_SECONDS).
   */
  queryCh: ClickHouseClient
  /** Mutations, partition drops and new columns, where the rows are (one server or every shard). */
  tables: TableAdmin
  accounts: AccountStore
}

/** A part of Burrow that runs in a role: registers routes and/or starts background work. */
export interface Component {
  name: string
  roles: Config['ROLE'][]
  start(rt: Runtime, app: App): Promise<{ stop(): Promise<void> } | undefined>
}

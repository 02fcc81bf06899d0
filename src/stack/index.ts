import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { z } from 'zod'
import type { Config } from '../config/env.ts'
import type { Logger } from '../observability/logger.ts'
import { clickhouseLibrary } from './clickhouse-library.ts'
import { startClickHouseServer } from './clickhouse-server.ts'
import { ensureBinaries } from './install.ts'
import { startNatsServer } from './nats-server.ts'
import { portOrFree } from './ports.ts'
import type { ManagedProcess } from './process.ts'

export interface Stack {
  natsUrl: string
  clickhouseUrl: string
  /** The servers this process started (empty when both URLs were given). */
  processes: ManagedProcess[]
  stop(): Promise<void>
}

export const StackFileSchema = z.object({ nats_url: z.string(), clickhouse_url: z.string() })

export const stackFile = (dataDir: string) => join(resolve(dataDir), 'stack.json')

export function readStackFile(dataDir: string): z.infer<typeof StackFileSchema> | undefined {
  try {
    return StackFileSchema.parse(JSON.parse(readFileSync(stackFile(dataDir), 'utf8')))
  } catch {
    return undefined
  }
}

/** Uses the servers named by NATS_URL / CLICKHOUSE_URL, and starts embedded ones for what is not given. */
export async function startStack(config: Config, log: Logger): Promise<Stack> {
  const dataDir = resolve(config.DATA_DIR)
  mkdirSync(dataDir, { recursive: true })
  const bins = config.NATS_URL
    ? undefined
    : ensureBinaries(['nats-server'], { autoInstall: config.AUTO_INSTALL, log })
  const processes: ManagedProcess[] = []
  const stop = async () => {
    await Promise.all(processes.map((p) => p.stop()))
  }
  try {
    let natsUrl = config.NATS_URL
    if (!natsUrl) {
      const port = await portOrFree(config.EMBEDDED_NATS_PORT)
      const nats = await startNatsServer({ bin: bins!['nats-server'], dataDir: join(dataDir, 'nats'), port })
      processes.push(nats)
      natsUrl = nats.url
      log.info({ url: natsUrl }, 'embedded nats-server started')
    }
    let clickhouseUrl = config.CLICKHOUSE_URL
    if (!clickhouseUrl) {
      const library = await clickhouseLibrary(undefined, (spec) =>
        log.info({ package: spec }, 'installing the embedded ClickHouse (~190 MB to download, once)'),
      )
      const ch = await startClickHouseServer({
        library,
        dataDir: join(dataDir, 'clickhouse'),
        httpPort: await portOrFree(config.EMBEDDED_CLICKHOUSE_HTTP_PORT),
        tcpPort: await portOrFree(config.EMBEDDED_CLICKHOUSE_TCP_PORT),
      })
      processes.push(ch)
      clickhouseUrl = ch.url
      log.info({ url: clickhouseUrl }, 'embedded ClickHouse started')
    }
    writeFileSync(
      stackFile(dataDir),
      `${JSON.stringify({ nats_url: natsUrl, clickhouse_url: clickhouseUrl }, null, 2)}\n`,
    )
    return { natsUrl, clickhouseUrl, processes, stop }
  } catch (err) {
    await stop()
    throw err
  }
}

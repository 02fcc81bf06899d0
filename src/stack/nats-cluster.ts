import { join } from 'node:path'
import { jetstreamManager } from '@nats-io/jetstream'
import { connectNats } from '../jetstream/connection.ts'
import { startNatsServer } from './nats-server.ts'
import { freePort } from './ports.ts'
import type { ManagedProcess } from './process.ts'
import { waitFor } from './process.ts'

/** One member of a loopback NATS cluster; `start()` brings it (back) up on the same ports and data. */
export interface NatsNode {
  name: string
  url: string
  process?: ManagedProcess & { url: string }
  start(): Promise<void>
}

export interface NatsCluster {
  nodes: NatsNode[]
  /** every member's client URL, comma-separated: what NATS_URL takes */
  url: string
  stop(): Promise<void>
}

/**
 * Starts `size` nats-servers on loopback as one JetStream cluster (data under `dataDir/n<i>`), and
 * waits until JetStream answers (a meta leader is elected). One node is a plain server.
 */
export async function startNatsCluster(opts: {
  bin: string
  dataDir: string
  size: number
  name?: string
  timeoutMs?: number
}): Promise<NatsCluster> {
  const clientPorts: number[] = []
  const routePorts: number[] = []
  for (let i = 0; i < opts.size; i++) {
    clientPorts.push(await freePort())
    routePorts.push(await freePort())
  }
  const nodes: NatsNode[] = clientPorts.map((port, i) => {
    const node: NatsNode = {
      name: `n${i + 1}`,
      url: `nats://127.0.0.1:${port}`,
      async start() {
        node.process = await startNatsServer({
          bin: opts.bin,
          dataDir: join(opts.dataDir, node.name),
          port,
          timeoutMs: opts.timeoutMs,
          ...(opts.size > 1
            ? {
                cluster: {
                  name: opts.name ?? 'burrow',
                  serverName: node.name,
                  port: routePorts[i]!,
                  routes: routePorts,
                },
              }
            : {}),
        })
      },
    }
    return node
  })
  const stop = async () => {
    await Promise.all(nodes.map((n) => n.process?.stop()))
  }
  try {
    await Promise.all(nodes.map((n) => n.start()))
    const url = nodes.map((n) => n.url).join(',')
    await waitForJetStream(url, opts.timeoutMs ?? 30_000)
    return { nodes, url, stop }
  } catch (err) {
    await stop()
    throw err
  }
}

/** Resolves once JetStream answers API requests on `url` (on a cluster: once it has a meta leader). */
export async function waitForJetStream(url: string, timeoutMs: number): Promise<void> {
  const nc = await connectNats(url, 'burrow-wait')
  try {
    await waitFor(
      async () => {
        const jsm = await jetstreamManager(nc, { timeout: 2000 })
        return (await jsm.getAccountInfo()) !== undefined
      },
      timeoutMs,
      200,
    )
  } finally {
    await nc.close()
  }
}

import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'

// Free ports are taken below the OS's ephemeral range. A port from that range (what listen(0) gives)
// can be handed to any outgoing connection as its local port between the moment it is picked and the
// moment the server binds it, or while a server is down between a stop and its restart on the same
// port: clickhouse-server then exits with 70. The test suite's three lanes open thousands of
// loopback connections a second while servers start and restart (a fault test's clickhouse-server
// exited 70 at start in a CI run, most likely so). Below the range only a listener can take a port,
// and the bind check sees listeners.

/** The lowest port picked (below it are well-known services' ports more often). */
const FIRST_PORT = 10_000

/** Ports tried below the ephemeral range before the OS is asked for any free port. */
const TRIES = 50

/**
 * The first port of the OS's ephemeral range: Linux's ip_local_port_range, else 49152 (the IANA
 * range macOS and Windows use).
 */
export function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0])
    if (Number.isInteger(low) && low > 1024) return low
  } catch {
    // not Linux
  }
  return 49_152
}

/** Binds `port` (0: any) on loopback and releases it: the port bound, or 0 when it was taken. */
function bindAndRelease(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.unref()
    srv.on('error', (err: NodeJS.ErrnoException) => {
      if (port !== 0 && (err.code === 'EADDRINUSE' || err.code === 'EACCES')) resolve(0)
      else reject(err)
    })
    srv.listen(port, '127.0.0.1', () => {
      const addr = srv.address()
      const bound = typeof addr === 'object' && addr ? addr.port : 0
      srv.close(() => resolve(bound))
    })
  })
}

/**
 * A port free on loopback now, below the OS's ephemeral range when there is room there (see
 * above); the caller binds it right away.
 */
export async function freePort(): Promise<number> {
  const low = ephemeralLow()
  if (low - FIRST_PORT >= 1000) {
    for (let i = 0; i < TRIES; i++) {
      const port = await bindAndRelease(FIRST_PORT + Math.floor(Math.random() * (low - FIRST_PORT)))
      if (port !== 0) return port
    }
  }
  return bindAndRelease(0)
}

export async function portOrFree(configured: number): Promise<number> {
  return configured > 0 ? configured : freePort()
}

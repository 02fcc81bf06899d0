// The embedded ClickHouse as Burrow starts it (src/stack/clickhouse-server.ts): the server's own
// settings, a start that cannot succeed, a parent that dies, and a crash of the server itself.
import { spawn } from 'node:child_process'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { afterAll, describe, expect, it } from 'vitest'
import { type ClickHouseServer, startClickHouseServer } from '../../../src/stack/clickhouse-server.ts'
import { freePort } from '../../../src/stack/ports.ts'
import { runLibrary, tempDir } from '../../harness/index.ts'

const started: ClickHouseServer[] = []
afterAll(async () => {
  await Promise.all(started.map((s) => s.stop()))
})

async function start(dataDir = tempDir('burrow-embedded-ch-')): Promise<ClickHouseServer> {
  const s = await startClickHouseServer({
    library: await runLibrary(),
    dataDir,
    httpPort: await freePort(),
    tcpPort: await freePort(),
  })
  started.push(s)
  return s
}

async function query(url: string, sql: string): Promise<string> {
  const res = await fetch(url, { method: 'POST', body: sql })
  const text = await res.text()
  if (!res.ok) throw new Error(text)
  return text.trim()
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

async function gone(pid: number, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs
  while (Date.now() < deadline) {
    if (!alive(pid)) return true
    await new Promise((r) => setTimeout(r, 100))
  }
  return !alive(pid)
}

describe('the embedded ClickHouse', () => {
  it("runs with the server's default settings and the laptop's cache sizes", async () => {
    const s = await start()
    // clickhouse-local's entry point changes some session settings; the profile sets them back
    expect(
      await query(s.url, 'SELECT name FROM system.settings WHERE changed AND value != default FORMAT TSV'),
    ).toBe('')
    expect(
      await query(
        s.url,
        "SELECT value FROM system.server_settings WHERE name = 'mark_cache_size' FORMAT TSV",
      ),
    ).toBe(String(128 << 20))
    expect(await query(s.url, 'SELECT version()')).toMatch(/^26\.7\./)
  })

  it("refuses to start on a port another process holds, quoting the server's own words", async () => {
    const holder = createServer()
    const port = await freePort()
    await new Promise<void>((r) => holder.listen(port, '127.0.0.1', r))
    try {
      const failed = startClickHouseServer({
        library: await runLibrary(),
        dataDir: tempDir('burrow-embedded-ch-'),
        httpPort: port,
        tcpPort: await freePort(),
      })
      await expect(failed).rejects.toThrow(
        /did not answer on http:\/\/127\.0\.0\.1:\d+ .*\n[\s\S]*Address already in use/,
      )
    } finally {
      holder.close()
    }
  })

  it('goes down with the process that started it, even when that process is killed outright', async () => {
    const dir = tempDir('burrow-embedded-ch-')
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx/esm',
        join(import.meta.dirname, 'start-server.ts'),
        await runLibrary(),
        dir,
        String(await freePort()),
        String(await freePort()),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    )
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).once('line', resolve)
      child.once('exit', (code) => reject(new Error(`the starter exited with ${code}`)))
    })
    const { pid, url } = JSON.parse(line) as { pid: number; url: string }
    expect(await query(url, 'SELECT 1')).toBe('1')
    child.kill('SIGKILL')
    // the server's stdin pipe closes with its parent: it shuts down in order (~5 s)
    expect(await gone(pid, 30_000)).toBe(true)
  })

  it('keeps its data when the server itself is killed, and serves it again after a restart', async () => {
    const dir = tempDir('burrow-embedded-ch-')
    const first = await start(dir)
    await query(first.url, 'CREATE TABLE kept (n UInt64) ENGINE = MergeTree ORDER BY n')
    await query(first.url, 'INSERT INTO kept SELECT number FROM numbers(1000)')
    first.kill()
    expect(await gone(first.pid, 10_000)).toBe(true)
    const second = await start(dir)
    expect(await query(second.url, 'SELECT count(), sum(n) FROM kept FORMAT TSV')).toBe('1000\t499500')
  })
})

import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { freePort } from '../../src/stack/ports.ts'
import { runBurrow, sharedServersEnv, spawnBurrow } from '../harness/cli.ts'
import { stack, tempDir } from '../harness/index.ts'

describe('burrow start on the shared servers', () => {
  // Each CLI run boots a whole Burrow (the first after a source change also builds it, bin/compile.js):
  // on a loaded machine the runs below take minutes together.
  it(
    'creates the default credentials once, serves /_health, reuses them and exits 0 on SIGTERM',
    { timeout: 240_000 },
    async () => {
      // everything pino would write, to check that no key reaches the log
      const env = await sharedServersEnv({ LOG_LEVEL: 'debug' })
      const { DATA_DIR: dataDir, PORT: port } = env
      const first = spawnBurrow(['start'], env)
      await first.waitFor(/Burrow listening on/)
      const printed = first.output()
      expect(printed).toMatch(/project API key:\s+phc_/)
      expect(printed).toMatch(/personal API key:\s+phx_/)
      const file = join(dataDir, 'local-credentials.json')
      expect(statSync(file).mode & 0o777).toBe(0o600)
      const creds = JSON.parse(readFileSync(file, 'utf8'))
      expect(Object.keys(creds).sort()).toEqual(['personal_api_key', 'project_api_key', 'project_id'])
      expect(printed).toContain(creds.personal_api_key)

      const health = await fetch(`http://127.0.0.1:${port}/_health`)
      expect(health.status).toBe(200)
      expect(await health.json()).toMatchObject({
        status: 'ok',
        dependencies: { nats: { status: 'ok' }, clickhouse: { status: 'ok' } },
      })

      // Requests that carry the key in the query string and in a malformed header.
      const base = `http://127.0.0.1:${port}`
      expect((await fetch(`${base}/api/projects/?personal_api_key=${creds.personal_api_key}`)).status).toBe(
        200,
      )
      const malformed = { authorization: `Token ${creds.personal_api_key}` }
      expect((await fetch(`${base}/api/projects/`, { headers: malformed })).status).toBe(401)

      // `keys list` shows each key's id and mask, never the key; `keys revoke` ends one at once.
      const made = await runBurrow(
        ['keys', 'create', '--scopes', 'project:read', '--label', 'to revoke'],
        env,
      )
      const doomed = /^(phx_\S+)$/m.exec(made.output)![1]!
      const bearer = { authorization: `Bearer ${doomed}` }
      expect((await fetch(`${base}/api/projects/`, { headers: bearer })).status).toBe(200)
      const listed = await runBurrow(['keys', 'list'], env)
      expect(listed.code).toBe(0)
      expect(listed.output).not.toContain(doomed)
      expect(listed.output).not.toContain(creds.personal_api_key)
      expect(listed.output).toContain('local default')
      const row = listed.output.split('\n').find((l) => l.includes('to revoke'))
      expect(row).toContain(doomed.slice(0, 8))
      const keyId = row!.split('\t')[0]!
      expect((await runBurrow(['keys', 'revoke', keyId], env)).code).toBe(0)
      expect((await fetch(`${base}/api/projects/`, { headers: bearer })).status).toBe(401)
      expect((await runBurrow(['keys', 'revoke', keyId], env)).code).toBe(1)
      expect((await runBurrow(['keys', 'list'], env)).output).not.toContain('to revoke')

      first.child.kill('SIGTERM')
      expect(await first.exited, first.output().slice(-4000)).toBe(0)
      // The banner prints the keys on stdout for the person starting Burrow; no log line holds them.
      const logLines = first
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
      expect(logLines.length).toBeGreaterThan(3)
      expect(logLines.filter((l) => l.includes(creds.personal_api_key))).toEqual([])
      expect(logLines.filter((l) => l.includes('phx_'))).toEqual([])

      const second = spawnBurrow(['start'], env)
      await second.waitFor(/Burrow listening on/)
      expect(second.output()).not.toMatch(/personal API key/)
      expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(creds)
      second.child.kill('SIGINT')
      expect(await second.exited, second.output().slice(-4000)).toBe(0)
    },
  )

  it('stops start-up with a message naming a wrong variable', async () => {
    const r = await runBurrow(['start'], { PORT: 'abc', DATA_DIR: tempDir() })
    expect(r.code).toBe(2)
    expect(r.output).toMatch(/invalid PORT/)
  })

  it('answers --help for every command', { timeout: 240_000 }, async () => {
    for (const args of [
      ['--help'],
      ['start', '--help'],
      ['keys', 'create', '--help'],
      ['keys', 'list', '--help'],
      ['keys', 'revoke', '--help'],
      ['projects', '--help'],
    ]) {
      const r = await runBurrow(args, {})
      expect(r.code).toBe(0)
      expect(r.output).toMatch(/Usage: burrow/)
    }
  })
})

describe('burrow start with the embedded stack', () => {
  it(
    'starts its own nats-server and clickhouse-server, records them, and keeps data across restarts',
    { timeout: 300_000 },
    async () => {
      const dataDir = tempDir()
      const port = String(await freePort())
      const env = { DATA_DIR: dataDir, PORT: port, NATS_URL: '', CLICKHOUSE_URL: '' }
      const first = spawnBurrow(['start'], env)
      await first.waitFor(/Burrow listening on/, 90_000)
      const recorded = JSON.parse(readFileSync(join(dataDir, 'stack.json'), 'utf8'))
      expect(recorded.nats_url).toMatch(/^nats:\/\/127\.0\.0\.1:\d+$/)
      expect(recorded.clickhouse_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      // the shared test servers run too: free ports mean no collision
      expect(recorded.nats_url).not.toBe(stack().natsUrl)

      const status = await runBurrow(['status'], env)
      expect(status.output).toContain(recorded.nats_url)
      expect(status.output).toContain(recorded.clickhouse_url)
      expect(status.output).toMatch(/burrow:.*\(up\)/)

      const created = await runBurrow(['projects', 'create', 'second'], env)
      expect(created.code).toBe(0)
      expect(JSON.parse(created.output.slice(created.output.indexOf('{')))).toMatchObject({
        id: 2,
        name: 'second',
      })

      const key = await runBurrow(['keys', 'create', '--project', '2', '--scopes', 'query:read'], env)
      expect(key.code).toBe(0)
      expect(key.output).toMatch(/^phx_/m)

      first.child.kill('SIGTERM')
      expect(await first.exited, first.output().slice(-4000)).toBe(0)
      // the embedded servers went down with it
      const down = await runBurrow(['status'], env)
      expect(down.output).toMatch(/clickhouse_url:.*\(down\)/)

      const second = spawnBurrow(['start'], env)
      await second.waitFor(/Burrow listening on/, 90_000)
      const again = await runBurrow(['projects', 'create', 'third'], env)
      expect(JSON.parse(again.output.slice(again.output.indexOf('{')))).toMatchObject({ id: 3 })
      second.child.kill('SIGTERM')
      expect(await second.exited).toBe(0)
    },
  )
})

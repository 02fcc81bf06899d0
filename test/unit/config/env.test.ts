import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../../src/config/env.ts'

function issuesOf(env: Record<string, string>) {
  try {
    loadConfig(env)
  } catch (err) {
    if (err instanceof ConfigError) return err.issues
    throw err
  }
  return []
}

describe('config', () => {
  it('uses the documented defaults', () => {
    const c = loadConfig({})
    expect(c.PORT).toBe(8000)
    expect(c.DATA_DIR).toBe('.data')
    expect(c.NATS_URL).toBeUndefined()
    expect(c.CLICKHOUSE_URL).toBeUndefined()
    expect(c.ROLE).toBe('all')
    expect(c.LOG_LEVEL).toBe('info')
    expect(c.CAPTURE_MAX_BODY_BYTES).toBe(20 * 1024 * 1024)
  })

  it('names the variable that is wrong', () => {
    expect(issuesOf({ PORT: 'eighty' }).map((i) => i.variable)).toEqual(['PORT'])
    expect(issuesOf({ PORT: '70000' }).map((i) => i.variable)).toEqual(['PORT'])
    expect(issuesOf({ NATS_URL: 'http://localhost:4222' }).map((i) => i.variable)).toEqual(['NATS_URL'])
    expect(issuesOf({ NATS_URL: 'nats://a:4222,http://b:4222' }).map((i) => i.variable)).toEqual(['NATS_URL'])
    expect(issuesOf({ NATS_URL: 'nats://a:4222,,nats://b:4222' }).map((i) => i.variable)).toEqual([
      'NATS_URL',
    ])
    expect(issuesOf({ NATS_URL: 'nats://a:4222,nats://b:4222,nats://c:4222' })).toEqual([])
    expect(issuesOf({ CLICKHOUSE_URL: 'not a url' }).map((i) => i.variable)).toEqual(['CLICKHOUSE_URL'])
    expect(issuesOf({ ROLE: 'everything' }).map((i) => i.variable)).toEqual(['ROLE'])
    expect(issuesOf({ CLICKHOUSE_DATABASE: 'x; DROP' }).map((i) => i.variable)).toEqual([
      'CLICKHOUSE_DATABASE',
    ])
  })

  it('reports every wrong variable at once', () => {
    expect(
      issuesOf({ PORT: '-1', LOG_LEVEL: 'loud' })
        .map((i) => i.variable)
        .sort(),
    ).toEqual(['LOG_LEVEL', 'PORT'])
  })

  it('treats empty values as unset and parses lists', () => {
    const c = loadConfig({ PORT: '', TRUSTED_PROXIES: '10.0.0.1, 127.0.0.1' })
    expect(c.PORT).toBe(8000)
    expect(c.TRUSTED_PROXIES).toEqual(['10.0.0.1', '127.0.0.1'])
  })
})

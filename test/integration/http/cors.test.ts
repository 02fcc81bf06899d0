import { beforeAll, describe, expect, it } from 'vitest'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import { createTestKey, startTestBurrow, WITHOUT_PROJECTOR } from '../../harness/index.ts'

// Keys are bearer tokens, so no answer may allow credentials; SDK endpoints allow the configured
// origins (any by default), the management API none unless configured.

const preflight = (url: string, origin: string) =>
  fetch(url, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST' } })

describe('CORS by default', () => {
  let burrow: RunningBurrow
  let key: string
  beforeAll(async () => {
    burrow = await startTestBurrow({}, WITHOUT_PROJECTOR)
    key = await createTestKey(['*'])
  })

  it('lets any page call the SDK endpoints, without credentials', async () => {
    for (const path of ['/i/v0/e/', '/batch/', '/decide/', '/flags/']) {
      const res = await preflight(`${burrow.url}${path}`, 'https://shop.example')
      expect(res.status, path).toBe(204)
      expect(res.headers.get('access-control-allow-origin'), path).toBe('https://shop.example')
      expect(res.headers.get('access-control-allow-credentials'), path).toBeNull()
    }
    const res = await fetch(`${burrow.url}/decide/?v=3`, {
      method: 'POST',
      headers: { origin: 'https://shop.example', 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: 'phc_unknown', distinct_id: 'x' }),
    })
    expect(res.headers.get('access-control-allow-origin')).toBe('https://shop.example')
    expect(res.headers.get('access-control-allow-credentials')).toBeNull()
  })

  it('answers a preflight with what the browser asked for, cacheable for a day', async () => {
    const res = await fetch(`${burrow.url}/flags/?v=2`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://shop.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, x-request-id',
      },
    })
    expect(res.status).toBe(204)
    expect(res.headers.get('content-length')).toBe('0')
    expect(res.headers.get('access-control-allow-methods')?.split(',')).toContain('POST')
    expect(res.headers.get('access-control-allow-headers')).toBe('content-type, x-request-id')
    expect(res.headers.get('access-control-max-age')).toBe('86400')
    expect(res.headers.get('vary')).toBe('Origin, Access-Control-Request-Headers')
    expect(await res.text()).toBe('')
  })

  it('refuses an OPTIONS request that is not a preflight', async () => {
    const res = await fetch(`${burrow.url}/i/v0/e/`, {
      method: 'OPTIONS',
      headers: { origin: 'https://a.example' },
    })
    expect(res.status).toBe(400)
  })

  it('marks every answer as varying by Origin, and allows no origin that was not sent', async () => {
    const res = await fetch(`${burrow.url}/i/v0/e/`, {
      method: 'POST',
      body: JSON.stringify({ api_key: 'phc_unknown', event: 'e', distinct_id: 'x' }),
    })
    expect(res.status).toBe(401)
    expect(res.headers.get('vary')).toBe('Origin')
    expect(res.headers.get('access-control-allow-origin')).toBeNull()
    const api = await fetch(`${burrow.url}/api/projects/`, { headers: { authorization: `Bearer ${key}` } })
    expect(api.headers.get('vary')).toBe('Origin')
  })

  it('gives pages of other sites nothing on the management and query API', async () => {
    const res = await fetch(`${burrow.url}/api/projects/`, {
      headers: { origin: 'https://evil.example', authorization: `Bearer ${key}` },
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('access-control-allow-origin')).toBeNull()
    expect(res.headers.get('access-control-allow-credentials')).toBeNull()
    for (const path of ['/api/projects/', '/api/projects/1/query/', '/flags/definitions']) {
      const pre = await preflight(`${burrow.url}${path}`, 'https://evil.example')
      expect(pre.headers.get('access-control-allow-origin'), path).toBeNull()
      expect(pre.status, path).toBe(404)
    }
  })
})

describe('CORS with configured origins', () => {
  let burrow: RunningBurrow
  let key: string
  beforeAll(async () => {
    burrow = await startTestBurrow(
      {
        CORS_PUBLIC_ORIGINS: 'https://shop.example',
        CORS_API_ORIGINS: 'https://console.example, https://admin.example',
      },
      WITHOUT_PROJECTOR,
    )
    key = await createTestKey(['*'])
  })

  it('allows exactly the listed origins on each side', async () => {
    const api = (origin: string) =>
      fetch(`${burrow.url}/api/projects/`, { headers: { origin, authorization: `Bearer ${key}` } })
    expect((await api('https://console.example')).headers.get('access-control-allow-origin')).toBe(
      'https://console.example',
    )
    expect((await api('https://admin.example')).headers.get('access-control-allow-origin')).toBe(
      'https://admin.example',
    )
    expect((await api('https://shop.example')).headers.get('access-control-allow-origin')).toBeNull()
    const capture = (origin: string) => preflight(`${burrow.url}/e/`, origin)
    expect((await capture('https://shop.example')).headers.get('access-control-allow-origin')).toBe(
      'https://shop.example',
    )
    expect((await capture('https://console.example')).headers.get('access-control-allow-origin')).toBeNull()
    const withKey = await api('https://console.example')
    expect(withKey.headers.get('access-control-allow-credentials')).toBeNull()
  })

  it('lets a listed page preflight every method the management API has', async () => {
    const pre = await fetch(`${burrow.url}/api/projects/1/feature_flags/1/`, {
      method: 'OPTIONS',
      headers: { origin: 'https://admin.example', 'access-control-request-method': 'DELETE' },
    })
    expect(pre.status).toBe(204)
    expect(pre.headers.get('access-control-allow-origin')).toBe('https://admin.example')
    expect(pre.headers.get('access-control-allow-methods')?.split(',')).toEqual(
      expect.arrayContaining(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']),
    )
    // a page not listed gets an answer that lets it read nothing
    const other = await fetch(`${burrow.url}/api/projects/`, {
      method: 'OPTIONS',
      headers: { origin: 'https://shop.example', 'access-control-request-method': 'GET' },
    })
    expect(other.headers.get('access-control-allow-origin')).toBeNull()
  })
})

import { beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import { api, createTestKey, createTestProject, startTestBurrow } from '../../harness/index.ts'

let burrow: RunningBurrow
let mine: Project
let other: Project

beforeAll(async () => {
  burrow = await startTestBurrow({ API_RATE_LIMIT_PER_MINUTE: '1000' })
  mine = await createTestProject('mine')
  other = await createTestProject('other')
})

describe('personal API keys and projects', () => {
  it('answers 401 without a key or with an unknown one', async () => {
    expect((await api(burrow.url, null)('GET', '/api/projects/')).status).toBe(401)
    const r = await api(burrow.url, 'phx_unknown')('GET', '/api/projects/')
    expect(r.status).toBe(401)
    expect(r.body).toMatchObject({ type: 'authentication_error', detail: expect.any(String), attr: null })
    expect(
      (await api(burrow.url, null)('GET', '/api/projects/', undefined, { authorization: 'Basic x' })).status,
    ).toBe(401)
  })

  it('answers 403 naming the missing scope', async () => {
    const key = await createTestKey(['query:read'])
    const r = await api(burrow.url, key)('GET', `/api/projects/${mine.id}/`)
    expect(r.status).toBe(403)
    expect(r.body.detail).toContain('project:read')
  })

  it('lists the organization’s projects with a paginated envelope', async () => {
    const key = await createTestKey(['project:read'])
    const r = await api(burrow.url, key)('GET', '/api/projects/?limit=1000')
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ next: null, previous: null })
    const ids = r.body.results.map((p: Project) => p.id)
    expect(ids).toEqual(expect.arrayContaining([mine.id, other.id]))
    expect(r.body.count).toBe(ids.length)
  })

  it('gives a key limited to some projects those projects only, and nothing of the organization', async () => {
    const key = await createTestKey(['project:write'], [mine.id])
    const call = api(burrow.url, key)
    // PostHog (posthog/permissions.py): such a key works on project-based endpoints only.
    const refusal = {
      type: 'authentication_error',
      code: 'permission_denied',
      detail: 'API keys with scoped projects are only supported on project-based endpoints.',
      attr: null,
    }
    const list = await call('GET', '/api/projects/')
    expect(list.status).toBe(403)
    expect(list.body).toEqual(refusal)
    const create = await call('POST', '/api/projects/', { name: 'sneaky' })
    expect(create.status).toBe(403)
    expect(create.body).toEqual(refusal)
    const all = await api(burrow.url, await createTestKey(['project:read']))(
      'GET',
      '/api/projects/?limit=1000',
    )
    expect(all.body.results.map((p: Project) => p.name)).not.toContain('sneaky')
    expect((await call('GET', `/api/projects/${other.id}/`)).status).toBe(404)
    expect((await api(burrow.url, key)('GET', '/api/projects/99999999/')).status).toBe(404)
    expect((await api(burrow.url, key)('GET', `/api/projects/${mine.id}/`)).body).toMatchObject({
      id: mine.id,
      name: 'mine',
    })
  })

  it('pages with absolute next/previous links that keep other parameters', async () => {
    const key = await createTestKey(['*'])
    const all = await api(burrow.url, key)('GET', '/api/projects/?limit=1000')
    expect(all.body.count).toBeGreaterThanOrEqual(3)
    const first = await api(burrow.url, key)('GET', '/api/projects/?limit=1&extra=x')
    expect(first.body.results).toHaveLength(1)
    expect(first.body.previous).toBeNull()
    const next = new URL(first.body.next)
    expect(next.searchParams.get('offset')).toBe('1')
    expect(next.searchParams.get('extra')).toBe('x')
    const second = await api(burrow.url, key)('GET', `${next.pathname}${next.search}`)
    expect(second.body.results[0].id).not.toBe(first.body.results[0].id)
    expect(new URL(second.body.previous).searchParams.get('offset')).toBe('0')
    for (const bad of ['limit=-1', 'limit=abc', 'offset=-5', 'limit=1.5', 'limit=5000']) {
      const r = await api(burrow.url, key)('GET', `/api/projects/?${bad}`)
      expect(r.status, bad).toBe(400)
      expect(r.body.type).toBe('validation_error')
    }
  })

  it('creates a project with project:write (201) and write implies read', async () => {
    const key = await createTestKey(['project:write'])
    const r = await api(burrow.url, key)('POST', '/api/projects/', { name: 'made by api' })
    expect(r.status).toBe(201)
    expect(r.body).toMatchObject({ name: 'made by api', api_token: expect.stringMatching(/^phc_/) })
    expect((await api(burrow.url, key)('GET', `/api/projects/${r.body.id}/`)).status).toBe(200)
    expect((await api(burrow.url, key)('POST', '/api/projects/', { name: '' })).status).toBe(400)
  })

  it('rate limits per key with 429 and Retry-After', async () => {
    const limited = await startTestBurrow({ API_RATE_LIMIT_PER_MINUTE: '3' })
    const key = await createTestKey(['project:read'])
    const statuses: number[] = []
    let retryAfter: string | null = null
    for (let i = 0; i < 5; i++) {
      const r = await api(limited.url, key)('GET', '/api/projects/')
      statuses.push(r.status)
      if (r.status === 429) retryAfter = r.headers.get('retry-after')
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429])
    expect(Number(retryAfter)).toBeGreaterThan(0)
  })
})

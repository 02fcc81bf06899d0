import { beforeAll, describe, expect, it } from 'vitest'
import { AccountStore } from '../../../src/accounts/store.ts'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import { api, createTestKey, createTestProject, nats, startTestBurrow } from '../../harness/index.ts'
import { secondUser } from '../../harness/management.ts'

let burrow: RunningBurrow

beforeAll(async () => {
  burrow = await startTestBurrow({ API_RATE_LIMIT_PER_MINUTE: '100000' })
})

async function keyId(raw: string): Promise<string> {
  const doc = await (await AccountStore.open(await nats())).personalKey(raw)
  return doc!.id
}

describe('personal API keys through the API (PostHog /api/personal_api_keys/)', () => {
  it('lists the caller’s own keys, newest first, in PostHog’s shape and never with the key', async () => {
    const raw = await createTestKey(['personal_api_key:read', 'query:read'])
    const r = await api(burrow.url, raw)('GET', '/api/personal_api_keys/')
    expect(r.status).toBe(200)
    expect(Array.isArray(r.body)).toBe(true)
    expect(r.text).not.toContain(raw)
    const mine = r.body[0]
    expect(Object.keys(mine).sort()).toEqual(
      [
        'created_at',
        'id',
        'label',
        'last_rolled_at',
        'last_used_at',
        'mask_value',
        'scoped_organizations',
        'scoped_teams',
        'scopes',
        'user_id',
        'value',
      ].sort(),
    )
    const created = r.body.map((k: { created_at: string }) => k.created_at)
    expect(created).toEqual([...created].sort().reverse())
    expect(r.body.every((k: { user_id: number }) => k.user_id === 1)).toBe(true)

    const current = await api(burrow.url, raw)('GET', '/api/personal_api_keys/@current/')
    expect(current.status).toBe(200)
    expect(current.body).toMatchObject({
      id: await keyId(raw),
      value: null,
      mask_value: `${raw.slice(0, 8)}...${raw.slice(-4)}`,
      scopes: ['personal_api_key:read', 'query:read'],
      scoped_teams: null,
      user_id: 1,
    })
  })

  it('revokes a key with DELETE (204): the key is refused from then on', async () => {
    const admin = await createTestKey(['personal_api_key:write'])
    const victim = await createTestKey(['project:read'])
    expect((await api(burrow.url, victim)('GET', '/api/projects/')).status).toBe(200)
    const id = await keyId(victim)
    const del = await api(burrow.url, admin)('DELETE', `/api/personal_api_keys/${id}/`)
    expect(del.status).toBe(204)
    expect(del.text).toBe('')
    expect((await api(burrow.url, victim)('GET', '/api/projects/')).status).toBe(401)
    expect((await api(burrow.url, admin)('DELETE', `/api/personal_api_keys/${id}/`)).status).toBe(404)
    // a key can revoke itself
    const self = await api(burrow.url, admin)('DELETE', '/api/personal_api_keys/@current/')
    expect(self.status).toBe(204)
    expect((await api(burrow.url, admin)('GET', '/api/personal_api_keys/')).status).toBe(401)
  })

  it('needs the personal_api_key scopes, an organization-wide key, and reaches only its user’s keys', async () => {
    const target = await keyId(await createTestKey(['query:read']))
    const noScope = await createTestKey(['query:read'])
    const list = await api(burrow.url, noScope)('GET', '/api/personal_api_keys/')
    expect(list.status).toBe(403)
    expect(list.body.detail).toContain('personal_api_key:read')
    const readOnly = await createTestKey(['personal_api_key:read'])
    expect((await api(burrow.url, readOnly)('DELETE', `/api/personal_api_keys/${target}/`)).status).toBe(403)

    const project = await createTestProject('keys scoped')
    const scoped = await createTestKey(['personal_api_key:write'], [project.id])
    const refused = await api(burrow.url, scoped)('DELETE', `/api/personal_api_keys/${target}/`)
    expect(refused.status).toBe(403)
    expect(refused.body.detail).toBe(
      'API keys with scoped projects are only supported on project-based endpoints.',
    )

    const other = await secondUser(burrow, `keys-${Date.now()}@example.com`)
    expect((await other.call('GET', `/api/personal_api_keys/${target}/`)).status).toBe(404)
    expect((await other.call('DELETE', `/api/personal_api_keys/${target}/`)).status).toBe(404)
    const theirs = await other.call('GET', '/api/personal_api_keys/')
    expect(theirs.body.map((k: { id: string }) => k.id)).not.toContain(target)
    // still alive after all those attempts
    const admin = await createTestKey(['personal_api_key:read'])
    expect((await api(burrow.url, admin)('GET', `/api/personal_api_keys/${target}/`)).status).toBe(200)
  })
})

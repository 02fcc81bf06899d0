import { beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import { createTestKey, createTestProject, startTestBurrow } from '../../harness/index.ts'

// Issue 14, item 5: many HTTP clients send `Content-Type: application/json` with an empty body on
// a DELETE (or a POST that needs none). That is no body, everywhere, not a 400.

let burrow: RunningBurrow
let project: Project
let key: string

beforeAll(async () => {
  burrow = await startTestBurrow({ API_RATE_LIMIT_PER_MINUTE: '100000' })
  project = await createTestProject('empty bodies')
  key = await createTestKey(['*'])
})

const send = (method: string, path: string, body = '') =>
  fetch(`${burrow.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: method === 'GET' ? undefined : body,
  })

describe('an empty body with Content-Type: application/json', () => {
  it('is no body on DELETE and on body-less POSTs', async () => {
    const base = `/api/projects/${project.id}`
    const created = await (
      await send('POST', `${base}/plugin_configs/`, JSON.stringify({ plugin: 'geoip' }))
    ).json()
    expect((await send('DELETE', `${base}/plugin_configs/${created.id}/`)).status).toBe(204)
    expect((await send('DELETE', `${base}/plugin_configs/${created.id}/`, '  \n')).status).toBe(404)
    expect((await send('POST', `${base}/query/check_auth_for_async/`)).status).toBe(200)
    const victim = await createTestKey(['personal_api_key:write'])
    const revoke = await fetch(`${burrow.url}/api/personal_api_keys/@current/`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${victim}`, 'content-type': 'application/json' },
      body: '',
    })
    expect(revoke.status).toBe(204)
  })

  it('is still a validation error where a body is required, and invalid JSON is still refused', async () => {
    const r = await send('POST', `/api/projects/${project.id}/session_recording_playlists/`)
    expect(r.status).toBe(400)
    expect((await r.json()).type).toBe('validation_error')
    const bad = await send('POST', `/api/projects/${project.id}/session_recording_playlists/`, '{"name":')
    expect(bad.status).toBe(400)
  })
})

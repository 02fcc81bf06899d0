import { beforeAll, describe, expect, it } from 'vitest'
import { type Env, managementEnv } from '../../harness/management.ts'

let env: Env

beforeAll(async () => {
  env = await managementEnv()
})

describe('OpenAPI document and docs page', () => {
  it('serves an OpenAPI 3 document generated from the zod route schemas at /api/schema/', async () => {
    const r = await fetch(`${env.burrow.url}/api/schema/`)
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toContain('application/json')
    const doc = (await r.json()) as {
      openapi: string
      paths: Record<
        string,
        Record<
          string,
          {
            parameters?: { name: string; in: string }[]
            requestBody?: unknown
            responses: Record<string, unknown>
          }
        >
      >
      components: { securitySchemes: Record<string, unknown> }
    }
    expect(doc.openapi).toMatch(/^3\./)
    expect(doc.components.securitySchemes.PersonalAPIKeyAuth).toEqual({ type: 'http', scheme: 'bearer' })
    const paths = Object.keys(doc.paths)
    for (const prefix of ['/api/environments/{project_id}', '/api/projects/{project_id}']) {
      expect(paths).toContain(`${prefix}/session_recording_playlists/`)
      expect(paths).toContain(`${prefix}/session_recording_playlists/{short_id}/`)
      expect(paths).toContain(`${prefix}/session_recording_playlists/{short_id}/recordings/`)
      expect(paths).toContain(
        `${prefix}/session_recording_playlists/{short_id}/recordings/{session_recording_id}/`,
      )
      expect(paths).toContain(`${prefix}/plugin_configs/{plugin_config_id}/logs/`)
    }
    const list = doc.paths['/api/environments/{project_id}/session_recording_playlists/']!
    const query = (list.get?.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name)
    expect(query).toEqual(
      expect.arrayContaining(['limit', 'offset', 'created_by', 'short_id', 'search', 'order']),
    )
    expect(list.post?.requestBody).toBeDefined()
    expect(Object.keys(list.post?.responses ?? {})).toContain('201')
    const logs = doc.paths['/api/environments/{project_id}/plugin_configs/{plugin_config_id}/logs/']!
    const logQuery = (logs.get?.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name)
    expect(logQuery).toEqual(
      expect.arrayContaining(['limit', 'offset', 'type_filter', 'search', 'after', 'before']),
    )
    // The schema and docs routes describe nothing but the API.
    expect(paths.some((p) => p.startsWith('/api/schema'))).toBe(false)

    const yaml = await fetch(`${env.burrow.url}/api/schema/?format=yaml`)
    expect(yaml.status).toBe(200)
    expect(await yaml.text()).toContain('openapi: 3.')
  })

  it('serves a browsable docs page', async () => {
    const r = await fetch(`${env.burrow.url}/api/schema/swagger-ui/`)
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toContain('text/html')
    expect(await r.text()).toContain('swagger')
  })
})

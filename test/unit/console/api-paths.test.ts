import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a plain ES module of the console
const api: any = await import(
  pathToFileURL(resolve(import.meta.dirname, '../../../src/console/web/lib/api.js')).href
)

// The console writes route segments into API paths: a crafted link must not choose the endpoint.
describe('console API paths', () => {
  it('encodes ids of their kind as one segment', () => {
    expect(api.projectPath(12, `feature_flags/${api.segment('int', 34)}/`)).toBe(
      '/api/projects/12/feature_flags/34/',
    )
    const uuid = '0190e7a2-1c3b-7def-8123-456789abcdef'
    expect(api.segment('uuid', uuid)).toBe(uuid)
    expect(api.segment('token', 'console-abc_1.2:3')).toBe('console-abc_1.2%3A3')
  })

  it('refuses what is not an id, and the call is never made', async () => {
    for (const [kind, value] of [
      ['uuid', '../../../../api/projects'],
      ['uuid', '..%2F..%2Fapi'],
      ['int', '1/../2'],
      ['int', ''],
      ['token', '..'],
      ['token', 'a/b'],
      ['token', 'a?b=1'],
    ]) {
      expect(api.segment(kind, value), `${kind} ${value}`).not.toMatch(/^[\w%.:-]+$/)
    }
    const calls: string[] = []
    const realFetch = globalThis.fetch
    globalThis.fetch = (async (url: string) => {
      calls.push(url)
      return new Response('{}')
    }) as typeof fetch
    try {
      const client = api.createApi('phx_x')
      const path = api.projectPath(1, `persons/${api.segment('uuid', '../../../../api/projects')}/`)
      await expect(client.get(path)).rejects.toMatchObject({ status: 400 })
      await expect(client.patch(api.projectPath('1/..', 'x/'), {})).rejects.toMatchObject({ status: 400 })
      expect(calls).toEqual([])
    } finally {
      globalThis.fetch = realFetch
    }
  })
})

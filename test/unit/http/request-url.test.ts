import Fastify from 'fastify'
import { describe, expect, it } from 'vitest'
import { requestUrl, setPublicUrl } from '../../../src/http/paging.ts'

async function linkFor(opts: { publicUrl?: string; trustProxy?: boolean }, headers: Record<string, string>) {
  const app = Fastify({ trustProxy: opts.trustProxy ?? false })
  setPublicUrl(app, opts.publicUrl)
  app.get('/api/x/', async (req) => ({ url: requestUrl(req).toString() }))
  const res = await app.inject({ method: 'GET', url: '/api/x/?limit=10', headers })
  await app.close()
  return (res.json() as { url: string }).url
}

// `next` links: a client's X-Forwarded-Host never chooses where they point (issue 40).
describe('requestUrl', () => {
  it('uses PUBLIC_URL (with its path prefix) whatever the request says', async () => {
    expect(
      await linkFor(
        { publicUrl: 'https://burrow.example/analytics/' },
        { 'x-forwarded-host': 'evil.example' },
      ),
    ).toBe('https://burrow.example/analytics/api/x/?limit=10')
  })

  it('without it, uses Host, and X-Forwarded-Host only from a trusted proxy', async () => {
    const headers = { host: 'burrow.local:8000', 'x-forwarded-host': 'evil.example' }
    expect(await linkFor({}, headers)).toBe('http://burrow.local:8000/api/x/?limit=10')
    expect(await linkFor({ trustProxy: true }, headers)).toBe('http://evil.example/api/x/?limit=10')
  })
})

import { describe, expect, it } from 'vitest'
import cors, { type FastifyCorsOptions } from '@fastify/cors'
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify'
import { type CorsPolicy, isPublicPath, registerCors } from '../../../src/http/cors.ts'

describe('which paths are public', () => {
  it('counts the SDK endpoints and nothing that takes a personal key', () => {
    for (const p of [
      '/e',
      '/e/',
      '/i/v0/e/?ver=1',
      '/batch/',
      '/decide/?v=4',
      '/flags?v=2',
      '/array/phc_x/config.js',
      '/e?ip=1',
      '/flags',
      '/api/surveys/?token=x',
    ])
      expect(isPublicPath(p), p).toBe(true)
    for (const p of [
      '/flags/definitions?token=x',
      '/api/projects/',
      '/api/feature_flag/local_evaluation',
      '/engagement',
      '/_health',
      '/flagsx',
      '/flags/definitions',
      '/flags/definitions/x',
      '/array',
      '/events/',
      '/?next=/e',
    ])
      expect(isPublicPath(p), p).toBe(false)
  })
})

// registerCors writes the headers @fastify/cors wrote when Burrow registered it with a per-request
// delegator (until the plugin's per-request cost was found in the flags profile). The plugin, set
// up as Burrow had it, is the reference: every combination of side, origin and preflight headers
// must get the same status, headers and body from both.
describe('registerCors answers as @fastify/cors did', () => {
  function reference(app: FastifyInstance, policy: CorsPolicy) {
    const side = (origins: string[]) => (origins.includes('*') ? true : origins.length ? origins : false)
    const base = { credentials: false, maxAge: 86400 }
    const publicOptions = { ...base, origin: side(policy.publicOrigins) }
    const apiOptions = { ...base, origin: side(policy.apiOrigins) }
    void app.register(cors, {
      delegator: (req: FastifyRequest, cb: (err: Error | null, options: FastifyCorsOptions) => void) =>
        cb(null, isPublicPath(req.url) ? publicOptions : apiOptions),
    })
  }

  async function appWith(install: (app: FastifyInstance, policy: CorsPolicy) => void, policy: CorsPolicy) {
    const app = Fastify()
    install(app, policy)
    for (const url of ['/flags/', '/e/', '/api/projects/', '/flags/definitions'])
      for (const method of ['GET', 'POST'] as const)
        app.route({ method, url, handler: async () => ({ ok: true }) })
    // a route that sets Vary itself
    app.get('/api/varied/', async (_req, reply) => reply.header('Vary', 'Accept-Encoding').send({ ok: 1 }))
    await app.ready()
    return app
  }

  const policies: CorsPolicy[] = [
    { publicOrigins: ['*'], apiOrigins: [] },
    {
      publicOrigins: ['https://shop.example'],
      apiOrigins: ['https://console.example', 'https://admin.example'],
    },
    { publicOrigins: [], apiOrigins: ['*'] },
  ]
  const origins = [undefined, 'https://shop.example', 'https://console.example', 'https://evil.example', '']
  const paths = [
    '/flags/?v=2',
    '/e/',
    '/api/projects/',
    '/flags/definitions?token=x',
    '/api/varied/',
    '/nowhere',
  ]
  const shown = (res: { statusCode: number; headers: Record<string, unknown>; body: string }) => {
    const { date: _date, connection: _connection, 'keep-alive': _keepAlive, ...headers } = res.headers
    return { status: res.statusCode, headers, body: res.body }
  }

  it('for every side, origin, method and preflight header', async () => {
    let compared = 0
    for (const policy of policies) {
      const [before, after] = await Promise.all([appWith(reference, policy), appWith(registerCors, policy)])
      for (const url of paths)
        for (const origin of origins)
          for (const method of ['GET', 'POST', 'OPTIONS'] as const)
            for (const requestMethod of [undefined, 'POST'])
              for (const requestHeaders of [undefined, 'content-type, x-custom']) {
                const headers: Record<string, string> = {}
                if (origin !== undefined) headers.origin = origin
                if (requestMethod) headers['access-control-request-method'] = requestMethod
                if (requestHeaders) headers['access-control-request-headers'] = requestHeaders
                const ask = { method, url, headers }
                const [a, b] = await Promise.all([before.inject(ask), after.inject(ask)])
                expect(shown(b), JSON.stringify({ policy, ask })).toEqual(shown(a))
                compared++
              }
      await Promise.all([before.close(), after.close()])
    }
    expect(compared).toBe(policies.length * paths.length * origins.length * 3 * 2 * 2)
  })

  it('answers a preflight from an allowed page with 204 and the allowed methods', async () => {
    const app = await appWith(registerCors, policies[0]!)
    const res = await app.inject({
      method: 'OPTIONS',
      url: '/flags/',
      headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST' },
    })
    expect(res.statusCode).toBe(204)
    expect(res.headers['access-control-allow-origin']).toBe('https://shop.example')
    expect(res.headers['access-control-allow-methods']).toBe('GET,HEAD,POST')
    expect(res.headers['access-control-max-age']).toBe('86400')
    expect(res.headers.vary).toBe('Origin, Access-Control-Request-Headers')
    await app.close()
  })
})

import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { gzipSync } from 'node:zlib'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { NotFound } from '../http/errors.ts'
import { publicCors } from './public-routes.ts'

// The scripts posthog-js loads on demand (recorder, surveys, exception autocapture, web vitals, …)
// from its asset host, which is Burrow's address when `api_host` points here:
//   GET /static/<sdk version>/<kind>.js   first choice of posthog-js ≥ 1.3xx
//   GET /static/<kind>.js?v=<version>     its fallback, and what older SDKs ask for
// They come from the posthog-js package Burrow ships. A versioned path for another version is a
// 404, so the SDK falls back to the unversioned path rather than running a mismatched build.

const SCRIPT = /^[a-z0-9][a-z0-9.-]*\.js$/

interface Asset {
  raw: Buffer
  gzip: Buffer
}

/** The posthog-js dist folder and version installed with Burrow, or null when it is missing. */
export function sdkDist(): { dir: string; version: string; files: Set<string> } | null {
  try {
    const require = createRequire(import.meta.url)
    const pkg = require.resolve('posthog-js/package.json')
    const version = (JSON.parse(readFileSync(pkg, 'utf8')) as { version: string }).version
    const dir = join(dirname(pkg), 'dist')
    const files = new Set(readdirSync(dir).filter((f) => SCRIPT.test(f)))
    return { dir, version, files }
  } catch {
    return null
  }
}

export function registerStaticRoutes(app: FastifyInstance): void {
  const dist = sdkDist()
  const assets = new Map<string, Asset>()

  const asset = (file: string): Asset | undefined => {
    if (!dist?.files.has(file)) return undefined
    let a = assets.get(file)
    if (!a) {
      const raw = readFileSync(join(dist.dir, file))
      a = { raw, gzip: gzipSync(raw) }
      assets.set(file, a)
    }
    return a
  }

  const send = (req: FastifyRequest, reply: FastifyReply, file: string, cacheControl: string) => {
    publicCors(reply)
    const a = asset(file)
    if (!a) throw new NotFound('No such SDK file.')
    const gzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))
    reply
      .header('cache-control', cacheControl)
      .header('vary', 'Accept-Encoding')
      .type('application/javascript; charset=utf-8')
    if (gzip) reply.header('content-encoding', 'gzip')
    return reply.send(gzip ? a.gzip : a.raw)
  }

  app.get('/static/:file', { schema: { hide: true } }, async (req, reply) =>
    send(req, reply, (req.params as { file: string }).file, 'public, max-age=300'),
  )
  app.get('/static/:version/:file', { schema: { hide: true } }, async (req, reply) => {
    const { version, file } = req.params as { version: string; file: string }
    if (version !== dist?.version) {
      publicCors(reply)
      throw new NotFound(`SDK version ${version} is not served here.`)
    }
    // A versioned file never changes.
    return send(req, reply, file, 'public, max-age=31536000, immutable')
  })
}

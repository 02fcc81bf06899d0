import { createHash } from 'node:crypto'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance, FastifyReply } from 'fastify'
import { NotFound } from '../http/errors.ts'

// The console's files: its own ES modules from src/console/web and the few libraries it imports,
// served straight from node_modules (no bundler, nothing to build). Only the files listed here are
// served: a URL never becomes a file path.

const require = createRequire(import.meta.url)
const WEB = join(dirname(fileURLToPath(import.meta.url)), 'web')

/** The folder of an installed package (found from its main file, whatever its `exports` allow). */
function packageDir(name: string): string {
  let dir = dirname(require.resolve(name))
  while (!dir.endsWith(`/node_modules/${name}`)) {
    const up = dirname(dir)
    if (up === dir) throw new Error(`cannot find the folder of package ${name}`)
    dir = up
  }
  return dir
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
}

/** The files of src/console/web, relative to it. */
function webFiles(dir = WEB, prefix = ''): string[] {
  return readdirSync(dir).flatMap((name) =>
    statSync(join(dir, name)).isDirectory()
      ? webFiles(join(dir, name), `${prefix}${name}/`)
      : [`${prefix}${name}`],
  )
}

/** URL path under /console/ → file on disk. */
export function consoleFiles(): Map<string, string> {
  const files = new Map<string, string>()
  for (const f of webFiles()) if (f !== 'index.html') files.set(`/console/${f}`, join(WEB, f))
  const preact = packageDir('preact')
  files.set('/console/vendor/preact.js', join(preact, 'dist/preact.module.js'))
  files.set('/console/vendor/preact-hooks.js', join(preact, 'hooks/dist/hooks.module.js'))
  files.set('/console/vendor/htm.js', join(packageDir('htm'), 'dist/htm.module.js'))
  files.set('/console/vendor/uplot.js', join(packageDir('uplot'), 'dist/uPlot.esm.js'))
  files.set('/console/vendor/uplot.css', join(packageDir('uplot'), 'dist/uPlot.min.css'))
  // rrweb-player's ES build is self-contained (rrweb and svelte bundled in), so it needs no bundler.
  files.set('/console/vendor/rrweb-player.js', join(packageDir('rrweb-player'), 'dist/rrweb-player.js'))
  files.set('/console/vendor/rrweb-player.css', join(packageDir('rrweb-player'), 'dist/style.min.css'))
  // d3-sankey and what it imports ship no ES bundle, but their src/ folders are ES modules whose
  // imports are relative (with .js) or bare names the import map resolves: served as they are.
  for (const name of ['d3-sankey', 'd3-array', 'd3-shape', 'd3-path', 'internmap']) {
    const src = join(packageDir(name), 'src')
    for (const f of webFiles(src))
      if (f.endsWith('.js')) files.set(`/console/vendor/${name}/${f}`, join(src, f))
  }
  return files
}

interface Asset {
  body: Buffer
  type: string
  etag: string
}

function load(path: string): Asset {
  const body = readFileSync(path)
  const ext = path.slice(path.lastIndexOf('.'))
  return {
    body,
    type: TYPES[ext] ?? 'application/octet-stream',
    etag: `"${createHash('sha1').update(body).digest('base64url')}"`,
  }
}

/** The inline import map must be allowed by the page's CSP: by its hash, not 'unsafe-inline'. */
export function contentSecurityPolicy(html: string): string {
  const hashes = [...html.matchAll(/<script type="importmap">([\s\S]*?)<\/script>/g)].map(
    (m) => `'sha256-${createHash('sha256').update(m[1]!).digest('base64')}'`,
  )
  return [
    "default-src 'self'",
    `script-src 'self' ${hashes.join(' ')}`,
    // uPlot positions its elements with style attributes
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ')
}

/** Serves the page at `/` and its files under `/console/`, each with an ETag (304 when unchanged). */
export function registerConsolePage(app: FastifyInstance): void {
  const assets = new Map([...consoleFiles()].map(([url, path]) => [url, load(path)]))
  const index = load(join(WEB, 'index.html'))
  const csp = contentSecurityPolicy(index.body.toString('utf8'))
  const send = (asset: Asset, ifNoneMatch: string | undefined, reply: FastifyReply) => {
    // Revalidate every time: a new Burrow version must not run against an old cached module.
    reply
      .header('cache-control', 'no-cache')
      .header('etag', asset.etag)
      .header('x-content-type-options', 'nosniff')
    if (ifNoneMatch === asset.etag) return reply.code(304).send()
    return reply.type(asset.type).send(asset.body)
  }
  app.get('/', { schema: { hide: true } }, (req, reply) => {
    reply.header('content-security-policy', csp).header('referrer-policy', 'no-referrer')
    return send(index, req.headers['if-none-match'], reply)
  })
  app.get('/console/*', { schema: { hide: true } }, (req, reply) => {
    const asset = assets.get(req.url.split('?')[0]!)
    if (!asset) throw new NotFound()
    return send(asset, req.headers['if-none-match'], reply)
  })
}

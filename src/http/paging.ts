import type { FastifyInstance, FastifyRequest } from 'fastify'
import { z } from 'zod'

export const DEFAULT_PAGE = 100
export const MAX_PAGE = 1000

/** `limit`/`offset` of every list endpoint: integers, limit 1..1000 (default 100), offset >= 0. */
export const PageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(MAX_PAGE).default(DEFAULT_PAGE),
  offset: z.coerce.number().int().min(0).default(0),
})
export type Page = z.infer<typeof PageQuery>

export interface Envelope<T> {
  count: number
  next: string | null
  previous: string | null
  results: T[]
}

// The public URL of each server (PUBLIC_URL), by the fastify instance that serves the request.
const publicUrls = new WeakMap<object, URL>()

/** Makes `app`'s absolute links start with `publicUrl` (createHttpServer calls it). */
export function setPublicUrl(app: FastifyInstance, publicUrl: string | undefined): void {
  if (publicUrl !== undefined) publicUrls.set(app, new URL(publicUrl))
}

/**
 * The absolute URL of this request as clients reach it: under PUBLIC_URL when set, else from the
 * Host header and the connection's scheme, where fastify takes X-Forwarded-Host and -Proto only
 * from TRUSTED_PROXIES (a client's own X-Forwarded-Host never chooses where a `next` link points).
 */
export function requestUrl(req: FastifyRequest): URL {
  const base = publicUrls.get(req.server)
  if (base) return new URL(`${base.pathname.replace(/\/+$/, '')}${req.url}`, base)
  return new URL(req.url, `${req.protocol}://${req.host || 'localhost'}`)
}

function pageUrl(req: FastifyRequest, limit: number, offset: number): string {
  const url = requestUrl(req)
  url.searchParams.set('limit', String(limit))
  url.searchParams.set('offset', String(offset))
  return url.toString()
}

/** The paginated envelope with absolute next/previous links that keep the other query params. */
export function envelope<T>(req: FastifyRequest, page: Page, count: number, results: T[]): Envelope<T> {
  const { limit, offset } = page
  return {
    count,
    next: offset + limit < count ? pageUrl(req, limit, offset + limit) : null,
    previous: offset > 0 ? pageUrl(req, limit, Math.max(0, offset - limit)) : null,
    results,
  }
}

export function paginate<T>(req: FastifyRequest, page: Page, all: T[]): Envelope<T> {
  return envelope(req, page, all.length, all.slice(page.offset, page.offset + page.limit))
}

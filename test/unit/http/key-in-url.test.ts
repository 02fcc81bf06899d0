import type { FastifyRequest } from 'fastify'
import { describe, expect, it } from 'vitest'
import { fromAnotherSite } from '../../../src/http/auth.ts'

const req = (headers: Record<string, string>) =>
  ({ headers: { host: 'burrow.test:8000', ...headers } }) as unknown as FastifyRequest

// A personal key in `?personal_api_key=` is refused when a browser sent the request from another site.
describe('fromAnotherSite', () => {
  it('is false for SDKs and curl (no Origin, no Fetch Metadata) and for same-origin pages', () => {
    expect(fromAnotherSite(req({}))).toBe(false)
    expect(fromAnotherSite(req({ 'sec-fetch-site': 'same-origin' }))).toBe(false)
    expect(fromAnotherSite(req({ 'sec-fetch-site': 'none' }))).toBe(false)
    expect(fromAnotherSite(req({ origin: 'http://burrow.test:8000' }))).toBe(false)
  })

  it('is true for another origin, or Fetch Metadata saying cross-site or same-site', () => {
    expect(fromAnotherSite(req({ origin: 'https://evil.example' }))).toBe(true)
    expect(fromAnotherSite(req({ origin: 'null' }))).toBe(true)
    expect(fromAnotherSite(req({ 'sec-fetch-site': 'cross-site' }))).toBe(true)
    expect(fromAnotherSite(req({ 'sec-fetch-site': 'same-site' }))).toBe(true)
  })
})

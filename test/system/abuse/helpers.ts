// Bad input, sent to a real Burrow process: a seeded generator (same seed, same requests, so a
// failure replays exactly), a small HTTP client that never throws, and the rules every answer to
// junk must follow: a clear 4xx in PostHog's error shape, or a 2xx, and never a 5xx.
import { request as httpRequest } from 'node:http'
import { AccountStore } from '../../../src/accounts/store.ts'
import { freePort } from '../../../src/stack/ports.ts'
import { nats, stack, tempDir } from '../../harness/index.ts'
import { type BurrowProcess, startBurrowProcess } from '../reliability/helpers.ts'

/** mulberry32: tiny, fast, and good enough to pick test inputs. */
export class Rng {
  private s: number
  constructor(readonly seed: number) {
    this.s = seed >>> 0
  }
  next(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0
    let t = this.s
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  int(n: number): number {
    return Math.floor(this.next() * n)
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!
  }
  chance(p: number): boolean {
    return this.next() < p
  }
}

const NASTY_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff\ud800',
  '😀',
  '\u202e',
  '../../etc/passwd',
  '..%2F..%2F',
  '*',
  '>',
  'a.b.c',
  "'; DROP TABLE events; --",
  '\\',
  '"',
  '${7*7}',
  '%00',
  '\r\n',
  'null',
  'true',
  '1e309',
  '-0',
  '\t',
  '<script>alert(1)</script>',
]

export function randomString(r: Rng, maxLen = 40): string {
  if (r.chance(0.4)) return r.pick(NASTY_STRINGS)
  const len = r.int(maxLen)
  let s = ''
  for (let i = 0; i < len; i++) {
    const k = r.int(10)
    s +=
      k < 6
        ? String.fromCharCode(0x20 + r.int(95))
        : k < 8
          ? String.fromCharCode(r.int(0x20))
          : String.fromCharCode(r.int(0xffff))
  }
  return s
}

/** Any JSON value, up to `depth` levels of nesting. */
export function randomJson(r: Rng, depth = 4): unknown {
  const k = r.int(depth > 0 ? 9 : 6)
  switch (k) {
    case 0:
      return null
    case 1:
      return r.chance(0.5)
    case 2:
      return r.pick([0, -1, 1.5, 2 ** 53 + 1, -1e308, 1e-308, Number.MAX_SAFE_INTEGER])
    case 3:
    case 4:
    case 5:
      return randomString(r)
    case 6:
      return Array.from({ length: r.int(4) }, () => randomJson(r, depth - 1))
    default:
      return Object.fromEntries(
        Array.from({ length: r.int(5) }, () => [randomString(r, 12), randomJson(r, depth - 1)]),
      )
  }
}

/** Flips, drops or inserts a few bytes: a body that is almost right is the interesting kind. */
export function mutateBytes(r: Rng, b: Buffer): Buffer {
  const out = Buffer.from(b)
  const edits = 1 + r.int(4)
  let buf = out
  for (let i = 0; i < edits && buf.length > 0; i++) {
    const at = r.int(buf.length)
    const op = r.int(3)
    if (op === 0) buf[at] = r.int(256)
    else if (op === 1) buf = Buffer.concat([buf.subarray(0, at), buf.subarray(at + 1)])
    else buf = Buffer.concat([buf.subarray(0, at), Buffer.from([r.int(256)]), buf.subarray(at)])
  }
  return buf
}

/** `depth` levels of nested arrays around a value, built as text (no recursion). */
export const nestedArrays = (depth: number, inner = '1') => `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`
export const nestedObjects = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`

export interface Answer {
  status: number
  text: string
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- test convenience
  json: any
}

export async function send(
  base: string,
  method: string,
  path: string,
  body?: string | Buffer,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers,
    body: typeof body === 'string' || body === undefined ? body : new Uint8Array(body),
  })
  const text = await res.text()
  let json: unknown = null
  try {
    json = JSON.parse(text)
  } catch {}
  return { status: res.status, text, json }
}

/** Sends the path exactly as written: fetch would resolve `..` and `%2e%2e` before sending. */
export function sendRaw(base: string, method: string, path: string, headers: Record<string, string> = {}) {
  const u = new URL(base)
  return new Promise<Answer>((resolve, reject) => {
    const req = httpRequest({ host: u.hostname, port: u.port, method, path, headers }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => (text += c))
      res.on('end', () => {
        let json: unknown = null
        try {
          json = JSON.parse(text)
        } catch {}
        resolve({ status: res.statusCode ?? 0, text, json })
      })
    })
    req.on('error', reject)
    req.end()
  })
}

/**
 * The rule for junk: 2xx, or a 4xx with PostHog's error body (405, PostHog's answer to deleting
 * what can only be soft-deleted, has none); a 5xx is a bug.
 */
export function isClearAnswer(a: Answer): boolean {
  if (a.status >= 200 && a.status < 300) return true
  if (a.status === 405) return true
  if (a.status >= 400 && a.status < 500) {
    return (
      typeof a.json?.type === 'string' &&
      typeof a.json?.code === 'string' &&
      typeof a.json?.detail === 'string'
    )
  }
  return false
}

/** A Burrow process on the shared servers, with a small body limit so oversized bodies are cheap. */
export async function startAbuseTarget(env: Record<string, string> = {}): Promise<BurrowProcess> {
  const s = stack()
  return startBurrowProcess(
    {
      NATS_URL: s.natsUrl,
      CLICKHOUSE_URL: s.clickhouseUrl,
      CLICKHOUSE_DATABASE: s.database,
      CAPTURE_MAX_BODY_BYTES: String(2 * 1024 * 1024),
      API_RATE_LIMIT_PER_MINUTE: '0',
      ...env,
    },
    { dataDir: tempDir(), port: await freePort() },
  )
}

/** The process must still be up and healthy after the abuse. */
export async function stillHealthy(b: BurrowProcess): Promise<{ exited: boolean; health: number }> {
  const exited = b.proc.child.exitCode !== null || b.proc.child.signalCode !== null
  const health = exited ? 0 : (await fetch(`${b.url}/_health`)).status
  return { exited, health }
}

/**
 * A project, a user and an all-scopes personal key of the calling file's own, in a fresh
 * organization: junk written by the tests (flags, playlists, plugin configs) reaches no other file.
 */
export async function ownProject(name: string) {
  const store = await AccountStore.open(await nats())
  const org = await store.createOrganization(`${name} org`)
  const user = await store.createUser({ organization_id: org.id, email: `${org.id}@abuse.test` })
  const project = await store.createProject({ name, organization_id: org.id })
  const { key } = await store.createPersonalKey({
    user_id: user.id,
    label: name,
    scopes: ['*'],
    projects: null,
  })
  return { project, key }
}

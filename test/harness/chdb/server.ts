// A ClickHouse-HTTP-compatible test server over chdb (ClickHouse 26.x embedded as a library), run as a
// child process of the tests: `node --import tsx test/harness/chdb/server.ts --port 0 --data-dir DIR`.
// Prints one JSON line {"url","version","pid"} on stdout when it answers. See README.md beside it.
//
// Design: chdb binds one data directory per process, but any number of native connections to it;
// each runs one query at a time on a libuv worker thread (off the event loop), and queries on
// different connections run in parallel. Connections keep state (SET, USE), so the server keeps a
// pool keyed by the state a request needs (database + URL settings): a request reuses an idle
// connection already in that state, else a fresh one it puts in that state.

// Each running query holds one libuv worker; leave room for zlib and fs next to the pool.
const POOL_SIZE = Number(process.env.BURROW_CHDB_POOL_SIZE) || 16
process.env.UV_THREADPOOL_SIZE ||= String(POOL_SIZE + 4)

import { randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { createRequire } from 'node:module'
import { hostname } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs, promisify } from 'node:util'
import zlib from 'node:zlib'
import { CHDB_VERSION, ensureChdb } from './install.ts'
import {
  QUERY_ID_MARK,
  explicitFormat,
  ident,
  isInsert,
  leadingWords,
  literal,
  mentionsProcesses,
  rewriteKillQuery,
  rewriteProcesses,
  secondStatementAt,
} from './sql.ts'

// ---------------------------------------------------------------------------------------------
// chdb's native addon (loaded from the cache dir; no types ship for it)

interface NativeResult {
  bytes: Buffer
  elapsed: number
  rowsRead: number
  bytesRead: number
}
interface NativeInsertResult {
  elapsed: number
  rowsWritten: number
  bytesWritten: number
}
interface ChdbNative {
  CreateConnection(path: string, args?: string[]): unknown
  CloseConnection(conn: unknown): void
  QueryAsyncConnection(
    conn: unknown,
    sql: string,
    format: string,
    params?: Record<string, string>,
  ): Promise<NativeResult>
  InsertRawAsyncConnection(
    conn: unknown,
    prefix: string,
    data: Buffer,
    countLines: boolean,
  ): Promise<NativeInsertResult>
}

function loadNative(dir: string): ChdbNative {
  const require = createRequire(join(dir, 'package.json'))
  // chdb's "exports" hide dist/; an absolute path is not subject to them.
  const loader = require(join(dir, 'node_modules', 'chdb', 'dist', 'loader.js')) as {
    loadNative(): ChdbNative
  }
  return loader.loadNative()
}

// ---------------------------------------------------------------------------------------------
// errors in the real server's shape

/** Error name -> HTTP status, as the real server's exceptionCodeToHTTPStatus maps their codes. */
const STATUS_BY_NAME: Record<string, number> = {
  REQUIRED_PASSWORD: 401,
  UNKNOWN_USER: 403,
  WRONG_PASSWORD: 403,
  AUTHENTICATION_FAILED: 403,
  SET_NON_GRANTED_ROLE: 403,
  ACCESS_DENIED: 403,
  QUERY_IS_TOO_LARGE: 413,
  NOT_IMPLEMENTED: 501,
  SOCKET_TIMEOUT: 503,
  CANNOT_OPEN_FILE: 503,
  CANNOT_SCHEDULE_TASK: 503,
  HTTP_LENGTH_REQUIRED: 411,
  TIMEOUT_EXCEEDED: 408,
  UNSUPPORTED_MEDIA_TYPE: 415,
}
for (const n of [
  'BAD_ARGUMENTS',
  'CANNOT_COMPILE_REGEXP',
  'CANNOT_PARSE_TEXT',
  'CANNOT_PARSE_ESCAPE_SEQUENCE',
  'CANNOT_PARSE_QUOTED_STRING',
  'CANNOT_PARSE_DATE',
  'CANNOT_PARSE_DATETIME',
  'CANNOT_PARSE_NUMBER',
  'CANNOT_PARSE_DOMAIN_VALUE_FROM_STRING',
  'CANNOT_PARSE_IPV4',
  'CANNOT_PARSE_IPV6',
  'CANNOT_PARSE_INPUT_ASSERTION_FAILED',
  'CANNOT_PARSE_UUID',
  'DUPLICATE_COLUMN',
  'ILLEGAL_COLUMN',
  'UNKNOWN_ELEMENT_IN_AST',
  'UNKNOWN_TYPE_OF_AST_NODE',
  'THERE_IS_NO_COLUMN',
  'TOO_DEEP_AST',
  'TOO_BIG_AST',
  'UNEXPECTED_AST_STRUCTURE',
  'SYNTAX_ERROR',
  'INCORRECT_DATA',
  'TYPE_MISMATCH',
  'VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE',
])
  STATUS_BY_NAME[n] = 400
for (const n of [
  'UNKNOWN_TABLE',
  'UNKNOWN_FUNCTION',
  'UNKNOWN_IDENTIFIER',
  'UNKNOWN_TYPE',
  'UNKNOWN_STORAGE',
  'UNKNOWN_DATABASE',
  'UNKNOWN_SETTING',
  'UNKNOWN_DIRECTION_OF_SORTING',
  'UNKNOWN_AGGREGATE_FUNCTION',
  'UNKNOWN_FORMAT',
  'UNKNOWN_DATABASE_ENGINE',
  'UNKNOWN_TYPE_OF_QUERY',
  'UNKNOWN_ROLE',
])
  STATUS_BY_NAME[n] = 404

class ClickHouseException extends Error {
  constructor(
    readonly code: number,
    readonly type: string,
    /** The full `Code: N. DB::Exception: … (TYPE)` text. */
    message: string,
  ) {
    super(message)
  }

  static of(code: number, type: string, text: string) {
    return new ClickHouseException(code, type, `Code: ${code}. DB::Exception: ${text}. (${type})`)
  }

  /** From an error chdb threw: its message already has the server's form, less the version. */
  static from(err: unknown): ClickHouseException {
    if (err instanceof ClickHouseException) return err
    const message = (err instanceof Error ? err.message : String(err)).trim()
    const m = /^Code: (\d+)\./.exec(message)
    const types = [...message.matchAll(/\(([A-Z][A-Z0-9_]{2,})\)/g)]
    if (m) return new ClickHouseException(Number(m[1]), types.at(-1)?.[1] ?? 'UNKNOWN_EXCEPTION', message)
    return ClickHouseException.of(1001, 'STD_EXCEPTION', message.replace(/\.$/, ''))
  }

  get status(): number {
    return STATUS_BY_NAME[this.type] ?? 500
  }
}

// ---------------------------------------------------------------------------------------------
// connections

interface Conn {
  handle: unknown
  /** The state (database + settings) it was put in; '' = as created. */
  sig: string
  busy: boolean
}

/**
 * Settings embedded chdb changes from the server defaults (clickhouse-local's choices), and the
 * query condition cache, off: with several connections on one data directory it answers from
 * stale entries (`WHERE team_id = T` found 0 rows where `countIf(team_id = T)` counted 10), which
 * a real server, whose cache sees every insert, never does.
 */
const RESET_LOCAL_DEFAULTS =
  'SET implicit_select = DEFAULT, allow_introspection_functions = DEFAULT, storage_file_read_method = DEFAULT, output_format_arrow_use_native_writer = DEFAULT, use_query_condition_cache = 0'

class Pool {
  private readonly all = new Set<Conn>()
  private idle: Conn[] = []
  private waiters: (() => void)[] = []

  constructor(
    private readonly native: ChdbNative,
    private readonly path: string,
    private readonly max: number,
  ) {}

  get size() {
    return this.all.size
  }

  async open(): Promise<Conn> {
    const c: Conn = { handle: this.native.CreateConnection(this.path), sig: '', busy: true }
    this.all.add(c)
    try {
      await this.native.QueryAsyncConnection(c.handle, RESET_LOCAL_DEFAULTS, 'TabSeparated')
    } catch (err) {
      this.destroy(c)
      throw err
    }
    return c
  }

  /** A connection the pool does not manage (for HTTP sessions); close with native.CloseConnection. */
  async openDetached(): Promise<Conn> {
    const c: Conn = { handle: this.native.CreateConnection(this.path), sig: '', busy: false }
    try {
      await this.native.QueryAsyncConnection(c.handle, RESET_LOCAL_DEFAULTS, 'TabSeparated')
    } catch (err) {
      this.native.CloseConnection(c.handle)
      throw err
    }
    return c
  }

  /** An idle connection in state `sig`, else one in the initial state ('' sig) for the caller to set up. */
  async acquire(sig: string): Promise<Conn> {
    for (;;) {
      const take = (i: number) => {
        const [c] = this.idle.splice(i, 1)
        c!.busy = true
        return c!
      }
      let i = this.idle.findIndex((c) => c.sig === sig)
      if (i >= 0) return take(i)
      i = this.idle.findIndex((c) => c.sig === '')
      if (i >= 0) return take(i)
      if (this.all.size < this.max) return this.open()
      if (this.idle.length) {
        this.destroy(take(0)) // the least recently used, in another state
        continue
      }
      await new Promise<void>((r) => this.waiters.push(r))
    }
  }

  release(c: Conn, reusable: boolean) {
    c.busy = false
    if (reusable) this.idle.push(c)
    else this.destroy(c)
    this.waiters.shift()?.()
  }

  destroy(c: Conn) {
    if (!this.all.delete(c)) return
    this.idle = this.idle.filter((x) => x !== c)
    try {
      this.native.CloseConnection(c.handle)
    } catch {}
    this.waiters.shift()?.()
  }

  busyCount() {
    return [...this.all].filter((c) => c.busy).length
  }

  closeAll() {
    for (const c of [...this.all]) if (!c.busy) this.destroy(c)
  }
}

/** Serializes calls (chdb's parameter binding is process-global state). */
class Mutex {
  private tail: Promise<unknown> = Promise.resolve()
  run<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.tail.then(fn, fn)
    this.tail = p.catch(() => undefined)
    return p
  }
}

// ---------------------------------------------------------------------------------------------
// HTTP

/** URL parameters the real HTTP handler consumes itself; every other one is a setting. */
const RESERVED = new Set([
  'query',
  'compress',
  'decompress',
  'user',
  'password',
  'quota_key',
  'query_id',
  'stacktrace',
  'role',
  'buffer_size',
  'wait_end_of_query',
  'session_id',
  'session_timeout',
  'session_check',
  'client_protocol_version',
  'close_session',
  'database',
  'default_format',
])

const CONTENT_TYPES: [RegExp, string][] = [
  [/^(TabSeparated|TSV)/i, 'text/tab-separated-values; charset=UTF-8'],
  [/^CSVWithNames/i, 'text/csv; charset=UTF-8; header=present'],
  [/^CSV/i, 'text/csv; charset=UTF-8; header=absent'],
  [/^(JSON|NDJSON|PrettyJSON)/i, 'application/json; charset=UTF-8'],
  [
    /^(RowBinary|Native|Parquet|Arrow|ORC|Avro|MsgPack|Protobuf|CapnProto|BSON|Npy)/i,
    'application/octet-stream',
  ],
  [/^XML/i, 'application/xml; charset=UTF-8'],
]
const contentType = (format: string) =>
  CONTENT_TYPES.find(([re]) => re.test(format))?.[1] ?? 'text/plain; charset=UTF-8'

const gunzip = promisify(zlib.gunzip)
const inflate = promisify(zlib.inflate)
const brotliDecompress = promisify(zlib.brotliDecompress)
const gzip = promisify(zlib.gzip)
const deflate = promisify(zlib.deflate)
const brotliCompress = promisify(zlib.brotliCompress)

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const c of req) chunks.push(c as Buffer)
  const raw = Buffer.concat(chunks)
  const enc = String(req.headers['content-encoding'] ?? '')
    .trim()
    .toLowerCase()
  if (!raw.length || !enc || enc === 'identity' || enc === 'none') return raw
  try {
    if (enc === 'gzip' || enc === 'x-gzip') return await gunzip(raw)
    if (enc === 'deflate') return await inflate(raw)
    if (enc === 'br') return await brotliDecompress(raw)
  } catch (err) {
    throw ClickHouseException.of(
      354,
      'ZLIB_INFLATE_FAILED',
      `inflate failed: ${(err as Error).message}: While reading the request body`,
    )
  }
  throw ClickHouseException.of(36, 'BAD_ARGUMENTS', `Unknown compression method '${enc}'`)
}

/** `multipart/form-data` with plain fields (clickhouse-js sends query and param_* this way). */
function parseMultipart(body: Buffer, type: string): Map<string, string> {
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1]
  if (!boundary) throw ClickHouseException.of(36, 'BAD_ARGUMENTS', 'multipart/form-data without boundary')
  const fields = new Map<string, string>()
  for (const part of body.toString('utf8').split(`--${boundary}`).slice(1)) {
    if (part.startsWith('--')) break
    const sep = part.indexOf('\r\n\r\n')
    if (sep < 0) continue
    const head = part.slice(0, sep)
    const name = /name="([^"]*)"/i.exec(head)?.[1]
    if (!name) continue
    if (/filename=/i.test(head))
      throw ClickHouseException.of(
        48,
        'NOT_IMPLEMENTED',
        'External tables are not supported by the chdb test server',
      )
    fields.set(name, part.slice(sep + 4).replace(/\r\n$/, ''))
  }
  return fields
}

function compressionFor(acceptEncoding: string | undefined): 'gzip' | 'deflate' | 'br' | undefined {
  const accepted = (acceptEncoding ?? '')
    .toLowerCase()
    .split(',')
    .map((s) => s.split(';')[0]!.trim())
  return (['gzip', 'deflate', 'br'] as const).find((e) => accepted.includes(e))
}

interface Session {
  conn: Conn | undefined
  busy: boolean
  timer?: NodeJS.Timeout
}

interface Context {
  native: ChdbNative
  pool: Pool
  version: string
  timezone: string
  displayName: string
}

export async function main() {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '0' },
      host: { type: 'string', default: '127.0.0.1' },
      'data-dir': { type: 'string' },
      'chdb-dir': { type: 'string' },
      timezone: { type: 'string', default: 'UTC' },
      'watch-stdin': { type: 'boolean', default: false },
    },
  })
  if (!values['data-dir']) throw new Error('--data-dir is required')
  const dataDir = resolve(values['data-dir'])
  // The engine takes its server time zone from TZ when no config names one.
  if (values.timezone) process.env.TZ = values.timezone

  const started = Date.now()
  const native = loadNative(values['chdb-dir'] ?? (await ensureChdb()))
  const pool = new Pool(native, dataDir, POOL_SIZE)
  const first = await pool.open()
  const info = await native.QueryAsyncConnection(first.handle, 'SELECT version(), timezone()', 'TabSeparated')
  pool.release(first, true)
  const [version = '', timezone = ''] = info.bytes.toString('utf8').trim().split('\t')
  const ctx: Context = { native, pool, version, timezone, displayName: hostname() }
  const log = process.env.BURROW_CHDB_LOG ? (s: string) => process.stderr.write(`${s}\n`) : () => {}

  const sessions = new Map<string, Session>()
  const running = new Set<string>()
  const paramMutex = new Mutex()
  let inFlight = 0

  const commonHeaders = (res: ServerResponse, queryId: string) => {
    res.setHeader('X-ClickHouse-Server-Display-Name', ctx.displayName)
    res.setHeader('X-ClickHouse-Query-Id', queryId)
    res.setHeader('X-ClickHouse-Timezone', ctx.timezone)
  }

  const sendError = (res: ServerResponse, queryId: string, err: unknown) => {
    const e = ClickHouseException.from(err)
    log(`error ${queryId}: ${e.message}`)
    if (res.headersSent) return res.destroy()
    commonHeaders(res, queryId)
    res.setHeader('X-ClickHouse-Exception-Code', String(e.code))
    res.setHeader('Content-Type', 'text/plain; charset=UTF-8')
    res.statusCode = e.status
    const text = /\(version [^)]*/.test(e.message)
      ? e.message
      : `${e.message} (version ${ctx.version} (chdb))`
    res.end(`${text}\n`)
  }

  const q = (conn: Conn, sql: string) => native.QueryAsyncConnection(conn.handle, sql, 'TabSeparated')

  async function handleQuery(req: IncomingMessage, res: ServerResponse, url: URL) {
    const method = req.method ?? 'GET'
    const params = new Map<string, string>()
    for (const [k, v] of url.searchParams) params.set(k, v)
    let body = await readBody(req)
    const type = String(req.headers['content-type'] ?? '')
    if (/^multipart\/form-data/i.test(type)) {
      for (const [k, v] of parseMultipart(body, type)) params.set(k, v)
      body = Buffer.alloc(0)
    }
    const queryId = params.get('query_id') || randomUUID()
    if (params.get('compress') === '1' || params.get('decompress') === '1')
      throw ClickHouseException.of(
        48,
        'NOT_IMPLEMENTED',
        'ClickHouse native compression (compress/decompress=1) is not supported by the chdb test server',
      )

    const settings = new Map<string, string>()
    const queryParams: Record<string, string> = {}
    for (const [k, v] of params) {
      if (!k || RESERVED.has(k)) continue
      if (k.startsWith('param_')) queryParams[k.slice(6)] = v
      else settings.set(k, v)
    }
    // GET is read-only on the real server (readonly=2 unless the request asks for more). Not applied
    // in a session: settings set here would outlive the request there.
    const sessionId = params.get('session_id')
    if (method === 'GET' && !sessionId && !['1', '2'].includes(settings.get('readonly') ?? ''))
      settings.set('readonly', '2')
    const header = (name: string) => {
      const v = req.headers[name]
      return Array.isArray(v) ? v[0] : v
    }
    const database = params.get('database') || header('x-clickhouse-database') || 'default'
    const format = params.get('default_format') || header('x-clickhouse-format') || 'TabSeparated'

    const urlQuery = params.get('query') ?? ''
    let sql: string
    let rawInsert: Buffer | undefined
    if (urlQuery && body.length) {
      if (isInsert(urlQuery)) {
        sql = urlQuery
        rawInsert = body
      } else sql = `${urlQuery}\n${body.toString('utf8')}`
    } else sql = urlQuery || body.toString('utf8')
    if (!sql.trim()) throw ClickHouseException.of(62, 'SYNTAX_ERROR', 'Empty query')

    const words = leadingWords(sql, 2)
    const insert = words[0] === 'INSERT'
    if (!insert) {
      const at = secondStatementAt(sql)
      if (at >= 0)
        throw ClickHouseException.of(
          62,
          'SYNTAX_ERROR',
          `Syntax error (Multi-statements are not allowed): failed at position ${at + 1}: ${sql
            .slice(at, at + 40)
            .trim()}`,
        )
      if (words[0] === 'KILL' && words[1] === 'QUERY') sql = rewriteKillQuery(sql)
      else if (mentionsProcesses(sql)) sql = rewriteProcesses(sql)
    }
    // These change the connection for later queries; the real server forgets them after the request.
    const changesConnection =
      words[0] === 'SET' || words[0] === 'USE' || (words[0] === 'CREATE' && words[1] === 'TEMPORARY')
    const outFormat = (!insert && explicitFormat(sql)) || format

    if (running.has(queryId) && params.get('replace_running_query') !== '1')
      throw ClickHouseException.of(
        216,
        'QUERY_WITH_SAME_ID_IS_ALREADY_RUNNING',
        `Query with id = ${queryId} is already running`,
      )

    // State the connection must be in. readonly goes last: readonly=1 forbids any later SET, so
    // for such a request the query id is part of the state (and the connection is not reused).
    const readonly = settings.get('readonly')
    settings.delete('readonly')
    const ownComment = !settings.has('log_comment')
    const readonly1 = readonly === '1'
    if (readonly1 && ownComment) settings.set('log_comment', QUERY_ID_MARK + queryId)
    const assignments = [...settings].map(([k, v]) => `${ident(k)} = ${literal(v)}`)
    if (readonly) assignments.push(`readonly = ${literal(readonly)}`)
    const sig = JSON.stringify([database, assignments])

    let session: Session | undefined
    if (sessionId) {
      session = sessions.get(sessionId)
      if (session?.busy)
        throw ClickHouseException.of(
          373,
          'SESSION_IS_LOCKED',
          `Session ${sessionId} is locked by a concurrent client`,
        )
      if (!session && params.get('session_check') === '1')
        throw ClickHouseException.of(372, 'SESSION_NOT_FOUND', `Session ${sessionId} not found`)
    }

    running.add(queryId)
    let conn: Conn | undefined
    let reusable = !changesConnection && !readonly1
    try {
      if (sessionId) {
        if (session) session.busy = true
        else {
          // Sessions keep a connection of their own, outside the pool.
          session = { conn: undefined, busy: true }
          sessions.set(sessionId, session)
          try {
            session.conn = await pool.openDetached()
          } catch (err) {
            sessions.delete(sessionId)
            throw err
          }
        }
        clearTimeout(session.timer)
        conn = session.conn!
      } else conn = await pool.acquire(sig)

      if (session ? database !== 'default' || assignments.length : conn.sig !== sig) {
        try {
          if (database !== 'default') await q(conn, `USE ${ident(database)}`)
          if (assignments.length) await q(conn, `SET ${assignments.join(', ')}`)
          conn.sig = sig
        } catch (err) {
          reusable = false
          throw err
        }
      }
      if (!readonly1 && ownComment) await q(conn, `SET log_comment = ${literal(QUERY_ID_MARK + queryId)}`)

      const handle = conn.handle
      const t0 = process.hrtime.bigint()
      let out: Buffer
      const summary = {
        read_rows: '0',
        read_bytes: '0',
        written_rows: '0',
        written_bytes: '0',
        total_rows_to_read: '0',
        result_rows: '0',
        result_bytes: '0',
        elapsed_ns: '0',
      }
      if (rawInsert) {
        if (Object.keys(queryParams).length)
          throw ClickHouseException.of(
            48,
            'NOT_IMPLEMENTED',
            'Query parameters in an INSERT with data are not supported by the chdb test server',
          )
        const r = await native.InsertRawAsyncConnection(handle, sql, rawInsert, false)
        summary.written_rows = summary.read_rows = String(r.rowsWritten)
        summary.written_bytes = summary.read_bytes = String(r.bytesWritten)
        out = Buffer.alloc(0)
      } else {
        const r = await (
          Object.keys(queryParams).length
            ? paramMutex.run(() => native.QueryAsyncConnection(handle, sql, format, queryParams))
            : native.QueryAsyncConnection(handle, sql, format)
        ).catch((err: unknown) => {
          // An INSERT with an empty body inserts nothing over HTTP; embedded ClickHouse calls it an error.
          if (insert && ClickHouseException.from(err).code === 108)
            return { bytes: Buffer.alloc(0), rowsRead: 0, bytesRead: 0, elapsed: 0 }
          throw err
        })
        out = Buffer.isBuffer(r.bytes) ? r.bytes : Buffer.from(r.bytes)
        summary.read_rows = summary.result_rows = String(r.rowsRead)
        summary.read_bytes = String(r.bytesRead)
        summary.result_bytes = String(out.length)
      }
      summary.elapsed_ns = String(process.hrtime.bigint() - t0)

      commonHeaders(res, queryId)
      res.setHeader('X-ClickHouse-Format', outFormat)
      res.setHeader('Content-Type', contentType(outFormat))
      res.setHeader('X-ClickHouse-Summary', JSON.stringify(summary))
      const enc = ['1', 'true'].includes(settings.get('enable_http_compression') ?? '')
        ? compressionFor(req.headers['accept-encoding'])
        : undefined
      if (enc && out.length) {
        const level = Number(settings.get('http_zlib_compression_level') ?? 3)
        out =
          enc === 'gzip'
            ? await gzip(out, { level })
            : enc === 'deflate'
              ? await deflate(out, { level })
              : await brotliCompress(out)
        res.setHeader('Content-Encoding', enc)
      }
      res.statusCode = 200
      res.end(out)
      log(`ok ${queryId} ${Number(summary.elapsed_ns) / 1e6}ms ${sql.slice(0, 200).replace(/\s+/g, ' ')}`)
    } finally {
      running.delete(queryId)
      const s = session
      if (s?.conn && sessionId) {
        s.busy = false
        const timeout = Number(params.get('session_timeout') ?? 60)
        const close = () => {
          sessions.delete(sessionId)
          try {
            native.CloseConnection(s.conn!.handle)
          } catch {}
        }
        if (params.get('close_session') === '1') close()
        else s.timer = setTimeout(close, timeout * 1000).unref()
      } else if (conn) pool.release(conn, reusable)
    }
  }

  const server = createServer(async (req, res) => {
    inFlight++
    res.on('close', () => inFlight--)
    const url = new URL(req.url ?? '/', 'http://localhost')
    const path = url.pathname.replace(/\/+$/, '') || '/'
    const queryId = url.searchParams.get('query_id') || randomUUID()
    try {
      if (path === '/ping' || path === '/replicas_status') {
        res.setHeader('Content-Type', 'text/html; charset=UTF-8')
        return res.end('Ok.\n')
      }
      if (path !== '/') {
        res.statusCode = 404
        res.setHeader('Content-Type', 'text/plain; charset=UTF-8')
        return res.end(`There is no handle ${url.pathname}\n\nUse / or /ping for health checks.\n`)
      }
      // GET / without a query is the real server's "Ok." page.
      if (req.method === 'GET' && !url.searchParams.has('query') && !req.headers['content-length']) {
        res.setHeader('Content-Type', 'text/html; charset=UTF-8')
        return res.end('Ok.\n')
      }
      await handleQuery(req, res, url)
    } catch (err) {
      sendError(res, queryId, err)
    }
  })
  server.keepAliveTimeout = 10_000
  server.requestTimeout = 0
  server.headersTimeout = 60_000

  let stopping = false
  const shutdown = async () => {
    if (stopping) return
    stopping = true
    server.close()
    server.closeIdleConnections()
    const busy = () => inFlight > 0 || pool.busyCount() > 0 || [...sessions.values()].some((s) => s.busy)
    const settle = async (ms: number) => {
      const deadline = Date.now() + ms
      while (busy() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    }
    // Like the real server: let running queries finish for a while, then cancel them.
    await settle(2000)
    if (busy()) {
      try {
        const c = await pool.openDetached()
        await native.QueryAsyncConnection(
          c.handle,
          "KILL QUERY WHERE query NOT ILIKE '%KILL QUERY%' ASYNC",
          'TabSeparated',
        )
      } catch {}
      await settle(3000)
    }
    // A query still on a worker thread would hold up exit (and the connections it uses).
    if (busy()) process.kill(process.pid, 'SIGKILL')
    for (const s of sessions.values()) {
      try {
        if (s.conn) native.CloseConnection(s.conn.handle)
      } catch {}
    }
    pool.closeAll()
    process.exit(0)
  }
  process.on('SIGTERM', shutdown)
  process.on('SIGINT', shutdown)
  if (values['watch-stdin']) {
    // The parent holds our stdin open; when it goes away, so do we.
    process.stdin.on('end', shutdown).on('close', shutdown).resume()
  }

  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject)
    server.listen(Number(values.port), values.host, () => resolveListen())
  })
  const addr = server.address()
  const port = typeof addr === 'object' && addr ? addr.port : Number(values.port)
  const host = values.host.includes(':') ? `[${values.host}]` : values.host
  process.stdout.write(
    `${JSON.stringify({ url: `http://${host}:${port}`, version, pid: process.pid, chdb: CHDB_VERSION, startup_ms: Date.now() - started })}\n`,
  )
}

const isMain = process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)
if (isMain) {
  main().catch((err) => {
    process.stderr.write(
      `chdb server failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    )
    process.exit(1)
  })
}

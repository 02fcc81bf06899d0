import http from 'node:http'
import https from 'node:https'
import {
  type ClickHouseClient,
  ClickHouseLogLevel,
  type ClickHouseSettings,
  createClient,
  parseError,
} from '@clickhouse/client'
import { heapShare } from '../runtime/byte-budget.ts'
import { type CompactAnswer, CompactRows } from './compact-rows.ts'

export type { ClickHouseClient }

/** What a client trusts on an https URL; by default Node's certificate authorities (and NODE_EXTRA_CA_CERTS). */
export interface TlsOptions {
  /** the certificate authorities (PEM) trusted instead of Node's list, e.g. a private CA's */
  ca?: string | Buffer
}

/**
 * A client on `database`; `settings` go with every query it sends (none by default). `tls` applies
 * to https URLs, for SELECTs and everything else alike.
 */
export function clickhouseClient(
  url: string,
  database?: string,
  settings: ClickHouseSettings = {},
  tls: TlsOptions = {},
): ClickHouseClient {
  const client = createClient({
    url,
    database,
    request_timeout: REQUEST_TIMEOUT_MS,
    // No settings unless the caller asks: statements run on the server's defaults.
    clickhouse_settings: settings,
    compression: { request: false, response: false },
    // Failures surface as errors to the caller (and its log line); the client's own retry noise is not useful.
    log: { level: ClickHouseLogLevel.OFF },
    ...(tls.ca === undefined ? {} : { tls: { ca_cert: Buffer.from(tls.ca) } }),
  })
  const fast = HttpSelect.for(url, database, settings, tls)
  if (fast) {
    selects.set(client, fast)
    const close = client.close.bind(client)
    client.close = async () => {
      fast.close()
      await close()
    }
  }
  return client
}

const REQUEST_TIMEOUT_MS = 60_000

/** Runs a SELECT and returns its rows as objects. */
export async function selectRows<T>(ch: ClickHouseClient, query: string): Promise<T[]> {
  return (await selectJson(ch, query, { format: 'JSONEachRow' })) as T[]
}

/** What one SELECT sends besides its text. */
export interface SelectOptions {
  /** JSONEachRow answers the rows as objects, JSONCompact the format's whole document */
  format: 'JSONEachRow' | 'JSONCompact'
  queryId?: string
  /** on top of the client's own */
  settings?: ClickHouseSettings
  abort?: AbortSignal
  /**
   * The largest answer read, in bytes (default MAX_ANSWER_BYTES); a larger one fails with
   * AnswerTooLarge. For clients made by clickhouseClient (http and https URLs); another client's
   * answer is read whole by @clickhouse/client.
   */
  maxBytes?: number
}

/** A JSONCompact SELECT read row by row (compact-rows.ts). */
export interface CompactSelectOptions extends Omit<SelectOptions, 'format'> {
  /** the longest row (its JSON text) accepted; a longer one fails with RowTooLarge */
  maxRowBytes: number
  /** applied to each row as it is parsed, with the column types */
  mapRow?: (row: unknown[], types: string[]) => unknown[]
  /** the most cells (rows × columns) accepted; more fail with TooManyCells */
  maxCells?: number
}

/** The answer of selectCompact, with the bytes of JSON it was read from. */
export type CompactResult = CompactAnswer & { answerBytes: number }

/**
 * A JSONCompact SELECT whose rows are parsed as they arrive, each at most `maxRowBytes` long, under
 * the same answer cap and budget as selectJson (clients made by clickhouseClient; another client's
 * answer is read whole by @clickhouse/client, its rows then checked).
 */
export async function selectCompact(
  ch: ClickHouseClient,
  query: string,
  opts: CompactSelectOptions,
): Promise<CompactResult> {
  const fast = selects.get(ch)
  const reader = new CompactRows(opts.maxRowBytes, opts.mapRow, opts.maxCells)
  if (fast) {
    const hold = new AnswerHold()
    try {
      return await fast.compact(query, { ...opts, format: 'JSONCompact' }, hold, reader)
    } finally {
      hold.release()
    }
  }
  const rs = await ch.query({
    query,
    format: 'JSONCompact',
    query_id: opts.queryId,
    clickhouse_settings: opts.settings,
    abort_signal: opts.abort,
  })
  const text = await rs.text()
  reader.push(Buffer.from(text))
  return { ...reader.finish(), answerBytes: Buffer.byteLength(text) }
}

/**
 * The default cap on one answer: a JavaScript string holds at most 2^29 - 24 characters, and one
 * row can be longer than that (`SELECT range(100000000)`), which threw inside the response's end
 * event and ended the process. Below the cap the answer is decoded and parsed as before.
 */
export const MAX_ANSWER_BYTES = 256 * 1024 * 1024

/** ClickHouse's answer to a SELECT was larger than the reader's cap (SelectOptions.maxBytes). */
export class AnswerTooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(`The answer is larger than ${maxBytes} bytes.`)
    this.name = 'AnswerTooLarge'
  }
}

/**
 * The answers being read and parsed at once in this process already hold ANSWER_BUDGET_BYTES; this
 * one was dropped and may be asked again in a moment.
 */
export class AnswerBudgetFull extends Error {
  constructor() {
    super('Too many large answers are being read at once.')
    this.name = 'AnswerBudgetFull'
  }
}

/**
 * Bytes of ClickHouse answers this process reads and parses at once, all SELECTs together: a
 * thirty-second of the heap (~130 MB with node's default heap on a large machine). An answer costs
 * about ten times its size while it is read, decoded, parsed and serialized again (a 200 MB answer
 * of short strings peaked at 1.8 GB of RSS), so three such answers at once reached node's 4 GB heap
 * limit, and a fourth (the per-key concurrency cap allows four) would have ended the process. No
 * single answer may be larger than the budget either, whatever its own cap.
 */
const answerBudget = heapShare(32)
export const ANSWER_BUDGET_BYTES = answerBudget.limit

/**
 * The first bytes of every answer are outside the budget: the small reads Burrow makes for itself
 * (server facts, flags, persons pages) go on while large answers fill it. The HTTP agent's socket
 * cap bounds how many such allowances are in use at once.
 */
const FREE_ANSWER_BYTES = 1024 * 1024

/** One answer's share of ANSWER_BUDGET_BYTES, given back once it is parsed (or has failed). */
class AnswerHold {
  private seen = 0
  private bytes = 0
  /** Takes `n` more bytes; false when the process's answers would pass the budget. */
  take(n: number): boolean {
    this.seen += n
    const counted = Math.max(0, this.seen - FREE_ANSWER_BYTES) - this.bytes
    if (counted === 0) return true
    if (!answerBudget.take(counted)) return false
    this.bytes += counted
    return true
  }
  release(): void {
    answerBudget.give(this.bytes)
    this.bytes = 0
  }
}

/**
 * A SELECT's answer, parsed. A client made by clickhouseClient sends it over Node's own keep-alive
 * HTTP(S) agent, which reads the answer under its cap and the process's answer budget:
 * @clickhouse/client reads a whole answer before it can be refused, and waits a timer tick
 * (`setTimeout(0)`, 1–2 ms) before every request, which on the insight path (a state read, then
 * the statement) was a fifth of a request's fixed cost. Other clients go through @clickhouse/client.
 */
export async function selectJson(ch: ClickHouseClient, query: string, opts: SelectOptions): Promise<unknown> {
  const fast = selects.get(ch)
  if (fast) {
    // The share is held until the parse is done: decoding and parsing are where the answer costs most.
    const hold = new AnswerHold()
    try {
      return parseAnswer(await fast.text(query, opts, hold), opts.format)
    } finally {
      hold.release()
    }
  }
  const rs = await ch.query({
    query,
    format: opts.format,
    query_id: opts.queryId,
    clickhouse_settings: opts.settings,
    abort_signal: opts.abort,
  })
  return rs.json()
}

function parseAnswer(text: string, format: SelectOptions['format']): unknown {
  try {
    if (format === 'JSONCompact') return JSON.parse(text)
    return text
      .split('\n')
      .filter((line) => line.length > 0)
      .map((line) => JSON.parse(line) as unknown)
  } catch (err) {
    // an exception raised after the answer began streams after the rows, with status 200
    const at = text.search(/Code: \d+\. DB::Exception/)
    throw at >= 0 ? parseError(text.slice(at)) : err
  }
}

const selects = new WeakMap<ClickHouseClient, HttpSelect>()

/**
 * SELECTs over HTTP or HTTPS, as @clickhouse/client sends them (query text in the body, settings in
 * the URL), on a keep-alive agent of the URL's protocol (with the client's certificate authorities).
 */
class HttpSelect {
  private constructor(
    private readonly base: URL,
    private readonly authorization: string,
    private readonly database: string | undefined,
    private readonly settings: ClickHouseSettings,
    private readonly agent: http.Agent,
    private readonly request: typeof http.request,
  ) {}

  static for(
    url: string,
    database: string | undefined,
    settings: ClickHouseSettings,
    tls: TlsOptions,
  ): HttpSelect | undefined {
    const base = new URL(url)
    if (base.protocol !== 'http:' && base.protocol !== 'https:') return undefined
    // the client's defaults: user `default` with no password unless the URL names them
    const user = decodeURIComponent(base.username) || 'default'
    const password = decodeURIComponent(base.password)
    base.username = ''
    base.password = ''
    const authorization = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`
    const keepAlive = { keepAlive: true, maxSockets: 10 }
    if (base.protocol === 'http:') {
      return new HttpSelect(base, authorization, database, settings, new http.Agent(keepAlive), http.request)
    }
    const agent = new https.Agent({ ...keepAlive, ...(tls.ca === undefined ? {} : { ca: tls.ca }) })
    return new HttpSelect(base, authorization, database, settings, agent, https.request)
  }

  text(query: string, opts: SelectOptions, hold: AnswerHold): Promise<string> {
    return this.run(query, opts, hold) as Promise<string>
  }

  async compact(
    query: string,
    opts: SelectOptions,
    hold: AnswerHold,
    reader: CompactRows,
  ): Promise<CompactResult> {
    return (await this.run(query, opts, hold, reader)) as CompactResult
  }

  private async run(query: string, opts: SelectOptions, hold: AnswerHold, reader?: CompactRows) {
    const params = new URLSearchParams()
    params.set('query_id', opts.queryId ?? crypto.randomUUID())
    for (const [k, v] of Object.entries({ ...this.settings, ...opts.settings })) {
      if (v === undefined) continue
      if (typeof v === 'object') throw new Error(`setting ${k}: only plain values are sent`)
      params.set(k, typeof v === 'boolean' ? (v ? '1' : '0') : String(v))
    }
    if (this.database !== undefined && this.database !== 'default') params.set('database', this.database)
    const url = new URL(this.base)
    url.search = params.toString()
    const body = `${query.trim().replace(/;+$/, '')} \nFORMAT ${opts.format}`
    const max = Math.min(opts.maxBytes ?? MAX_ANSWER_BYTES, ANSWER_BUDGET_BYTES)
    try {
      return await this.send(url, body, max, hold, opts.abort, reader)
    } catch (err) {
      // a kept-alive socket the server closed meanwhile fails before the query reached it: send again
      // (nothing reached the reader then)
      if ((err as { reused?: boolean }).reused) return this.send(url, body, max, hold, opts.abort, reader)
      throw err
    }
  }

  private send(
    url: URL,
    body: string,
    maxBytes: number,
    hold: AnswerHold,
    abort?: AbortSignal,
    reader?: CompactRows,
  ): Promise<string | CompactResult> {
    return new Promise((resolve, reject) => {
      if (abort?.aborted) return reject(new Error('The user aborted a request.'))
      const req = this.request(url, {
        method: 'POST',
        agent: this.agent,
        headers: { authorization: this.authorization, 'content-type': 'text/plain; charset=utf-8' },
      })
      const onAbort = () => req.destroy(new Error('The user aborted a request.'))
      abort?.addEventListener('abort', onAbort, { once: true })
      const timer = setTimeout(() => req.destroy(new Error('Timeout error.')), REQUEST_TIMEOUT_MS)
      const done = () => {
        clearTimeout(timer)
        abort?.removeEventListener('abort', onAbort)
      }
      req.on('error', (err: NodeJS.ErrnoException) => {
        done()
        const reset = err.code === 'ECONNRESET' || err.code === 'EPIPE'
        reject(reset && req.reusedSocket ? Object.assign(err, { reused: true }) : err)
      })
      req.on('response', (res) => {
        // a reader takes a success's rows as they come; an error's text is kept for its message
        const streaming = reader !== undefined && (res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300
        const chunks: Buffer[] = []
        let size = 0
        let dropped = false
        res.on('data', (c: Buffer) => {
          // chunks already buffered may still arrive after the drop; the hold may be released by then
          if (dropped) return
          size += c.length
          // Past the cap, or past what the process's answers may hold at once, the connection is
          // dropped: the rest of the answer is never held or decoded.
          const fits = size <= maxBytes
          let failure: unknown = fits ? new AnswerBudgetFull() : new AnswerTooLarge(maxBytes)
          if (fits && hold.take(c.length)) {
            if (!streaming) return void chunks.push(c)
            try {
              reader.push(c)
              // one chunk a turn: other requests are answered between the chunks of a large answer
              // (read back to back, a 3 MB answer's rows held the event loop for ~50-180 ms)
              res.pause()
              setImmediate(() => res.resume())
              return
            } catch (err) {
              failure = err
            }
          }
          done()
          dropped = true
          reject(failure)
          req.destroy()
        })
        res.on('error', (err) => {
          done()
          reject(err)
        })
        res.on('end', () => {
          done()
          const status = res.statusCode ?? 0
          try {
            if (streaming) return resolve({ ...reader.finish(), answerBytes: size })
            const text = Buffer.concat(chunks).toString('utf8')
            if (status >= 200 && status < 300) resolve(text)
            else reject(parseError(text || `ClickHouse answered HTTP ${status}`))
          } catch (err) {
            // an exception here would be thrown from an event handler, past every caller
            reject(err)
          }
        })
      })
      req.end(body)
    })
  }

  close(): void {
    this.agent.destroy()
  }
}

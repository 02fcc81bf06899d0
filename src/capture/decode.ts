import { isAscii, isUtf8 } from 'node:buffer'
import { promisify } from 'node:util'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { gunzip as gunzipCb, inflate as inflateCb, inflateRaw as inflateRawCb } from 'node:zlib'
import { Unavailable, ValidationError } from '../http/errors.ts'
import { heapShare } from '../runtime/byte-budget.ts'
import { opensJson, parseWhole, type ReadLimits, readCaptureBytes, readCaptureJson } from './json-reader.ts'
import { decompressLz64 } from './lz64.ts'

// Turns a capture request body into JSON, whatever wrapping the SDK chose: plain JSON, gzip
// (Content-Encoding or ?compression=gzip-js), deflate (Content-Encoding), lz-string base64
// (?compression=lz64, posthog-js's legacy format), or a form post with a base64 (optionally
// compressed) `data=` field. Every decompression stops at `maxDecompressedBytes`; inflating runs
// on libuv's thread pool and big bodies are parsed in slices, so one large request does not hold
// up the others. A big JSON body is never made one string: it is checked to be UTF-8 and read as
// bytes, each event made a string of its own (json-reader.ts).

export interface RawRequest {
  body: Buffer
  contentType: string | undefined
  contentEncoding: string | undefined
  compression: string | undefined
  maxDecompressedBytes: number
}

const gunzip = promisify(gunzipCb)
const inflate = promisify(inflateCb)
const inflateRaw = promisify(inflateRawCb)

const isGzip = (b: Buffer) => b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b

function inflateError(err: unknown, max: number, what: string): ValidationError {
  const tooBig = (err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE'
  return new ValidationError(
    tooBig ? `Decompressed body is larger than ${max} bytes.` : `Body is not valid ${what} data.`,
    null,
    tooBig ? 'payload_too_large' : 'invalid_compression',
  )
}

async function ungzip(b: Buffer, max: number): Promise<Buffer> {
  try {
    return await gunzip(b, { maxOutputLength: max })
  } catch (err) {
    throw inflateError(err, max, 'gzip')
  }
}

/** HTTP's deflate is zlib-wrapped, but some clients send the raw stream: both are read. */
async function undeflate(b: Buffer, max: number): Promise<Buffer> {
  try {
    return await inflate(b, { maxOutputLength: max })
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE')
      throw inflateError(err, max, 'deflate')
    try {
      return await inflateRaw(b, { maxOutputLength: max })
    } catch (rawErr) {
      throw inflateError(rawErr, max, 'deflate')
    }
  }
}

function base64(text: string): Buffer {
  const clean = text.trim().replace(/ /g, '+')
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(clean)) {
    throw new ValidationError('The data field is not valid base64.', 'data', 'invalid_payload')
  }
  return Buffer.from(clean, 'base64')
}

const UTF8_SLICE = 1024 * 1024
/**
 * A body of only ASCII bytes (what nearly every SDK sends: JSON escapes the rest) up to this size is
 * made a string in one go, as latin1, whose text for those bytes is the UTF-8 one: checking and
 * copying it is several times cheaper than the strict decoder, and a few milliseconds at most.
 */
const ASCII_WHOLE = 8 * 1024 * 1024

// Whole bodies (nearly all) are decoded by one shared decoder: a call without `stream` starts
// afresh, and a decoder made per request was a measurable part of a small request's CPU.
let wholeDecoder = new TextDecoder('utf-8', { fatal: true })

/** Strict UTF-8 decoding of a body of at most UTF8_SLICE bytes. */
function utf8(b: Buffer): string {
  if (isAscii(b)) return b.toString('latin1')
  try {
    return wholeDecoder.decode(b)
  } catch {
    // a fresh one, in case the failed call left state behind
    wholeDecoder = new TextDecoder('utf-8', { fatal: true })
    throw new ValidationError('Body is not valid UTF-8.', null, 'invalid_payload')
  }
}

/** Strict UTF-8 decoding, a megabyte at a time with other work in between. */
async function text(b: Buffer): Promise<string> {
  if (b.length <= UTF8_SLICE) return utf8(b)
  if (b.length <= ASCII_WHOLE && isAscii(b)) return b.toString('latin1')
  const decoder = new TextDecoder('utf-8', { fatal: true })
  try {
    const parts: string[] = []
    for (let at = 0; at < b.length; at += UTF8_SLICE) {
      parts.push(decoder.decode(b.subarray(at, at + UTF8_SLICE), { stream: at + UTF8_SLICE < b.length }))
      await nextTurn()
    }
    return parts.join('')
  } catch {
    throw new ValidationError('Body is not valid UTF-8.', null, 'invalid_payload')
  }
}

const BOM = [0xef, 0xbb, 0xbf]

/**
 * `b` checked to be UTF-8, as the strict decoder checks it (the same error), and without the byte
 * order mark the decoder drops: the bytes readCaptureBytes reads.
 */
function utf8Bytes(b: Buffer): Buffer {
  if (!isUtf8(b)) throw new ValidationError('Body is not valid UTF-8.', null, 'invalid_payload')
  return b[0] === BOM[0] && b[1] === BOM[1] && b[2] === BOM[2] ? b.subarray(3) : b
}

/** readCaptureJson of `b`'s text; a big body read as bytes, never made one string. */
async function readJson(b: Buffer, limits: ReadLimits): Promise<unknown> {
  if (b.length < limits.incrementalFrom) return readCaptureJson(await text(b), limits)
  return readCaptureBytes(utf8Bytes(b), limits)
}

/** lz64's output counts against INFLATED_BUDGET_BYTES as it grows, as an inflated body does. */
async function lz64(data: string, max: number, held: { bytes: number }): Promise<string> {
  const out = await decompressLz64(data, max, (chars) => {
    held.bytes += holdInflated(chars)
  })
  if (!out) throw new ValidationError('Body is not valid lz-string (lz64) data.', null, 'invalid_compression')
  return out
}

/**
 * Bytes of inflated bodies (gzip, deflate; lz64's output, a character counted as a byte) the process
 * decodes and parses at once, all requests together: an eighth of the heap. A body costs about three times its inflated size until it is
 * parsed (six /s/ bodies of 100 KB, 100 MB each once inflated, raised RSS by 1.8 GB), and each
 * request may inflate to 5× its body limit, so a few dozen small requests could pass the heap.
 */
const inflatedBudget = heapShare(8)
export const INFLATED_BUDGET_BYTES = inflatedBudget.limit

/** Counts an inflated body against INFLATED_BUDGET_BYTES; returns the bytes to give back. */
function holdInflated(bytes: number): number {
  if (!inflatedBudget.take(bytes)) {
    throw new Unavailable('Too many large bodies are being decoded at once; send again shortly.', 1)
  }
  return bytes
}

/** The JSON a capture (or flags) request carries, unwrapped and parsed within `limits`. */
export async function decodeBody(req: RawRequest, limits: ReadLimits): Promise<unknown> {
  const held = { bytes: 0 }
  try {
    return await decodeHeld(req, limits, held)
  } finally {
    inflatedBudget.give(held.bytes)
  }
}

async function decodeHeld(req: RawRequest, limits: ReadLimits, held: { bytes: number }): Promise<unknown> {
  const compression = req.compression?.toLowerCase()
  // no body inflates past the budget (400 payload_too_large), whatever its own limit
  const max = Math.min(req.maxDecompressedBytes, INFLATED_BUDGET_BYTES)
  // (no closures made per request here: tsx names each one with a defineProperty call)
  let body = req.body
  if (body.length === 0) throw new ValidationError('Body is empty.', null, 'no_data')
  const encoding = req.contentEncoding?.toLowerCase()
  if (encoding === 'gzip' || compression === 'gzip-js' || compression === 'gzip' || isGzip(body)) {
    body = await ungzip(body, max)
    held.bytes += holdInflated(body.length)
  } else if (encoding === 'deflate') {
    body = await undeflate(body, max)
    held.bytes += holdInflated(body.length)
  }
  const isLz = compression === 'lz64' || compression === 'lz-string'
  if ((req.contentType ?? '').toLowerCase().startsWith('application/x-www-form-urlencoded')) {
    const form = new URLSearchParams(await text(body))
    const data = form.get('data')
    if (data === null) throw new ValidationError('Form body has no data field.', 'data', 'no_data')
    if (isLz) return readCaptureJson(await lz64(data, max, held), limits)
    const inner = base64(data)
    if (!isGzip(inner)) return readJson(inner, limits)
    const inflated = await ungzip(inner, max)
    held.bytes += holdInflated(inflated.length)
    return readJson(inflated, limits)
  }
  if (isLz) return readCaptureJson(await lz64(await text(body), max, held), limits)
  if (body.length >= limits.incrementalFrom) {
    const bytes = utf8Bytes(body)
    if (opensJson(bytes)) return readCaptureBytes(bytes, limits)
  }
  // A small body is decoded and parsed without an await (what nearly every request is)
  const raw = body.length <= UTF8_SLICE ? utf8(body) : await text(body)
  const first = raw.trimStart()[0]
  // Some clients post base64 JSON without a form wrapper.
  if (first !== '{' && first !== '[') return readJson(base64(raw), limits)
  return raw.length < limits.incrementalFrom ? parseWhole(raw) : readCaptureJson(raw, limits)
}

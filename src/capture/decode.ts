import { gunzipSync } from 'node:zlib'
import LZString from 'lz-string'
import { ValidationError } from '../http/errors.ts'
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../http/json-depth.ts'

// Turns a capture request body into JSON, whatever wrapping the SDK chose: plain JSON, gzip
// (Content-Encoding or ?compression=gzip-js), lz-string base64 (?compression=lz64, posthog-js's
// legacy format), or a form post with a base64 (optionally compressed) `data=` field.

export interface RawRequest {
  body: Buffer
  contentType: string | undefined
  contentEncoding: string | undefined
  compression: string | undefined
  maxDecompressedBytes: number
}

const isGzip = (b: Buffer) => b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b

function gunzip(b: Buffer, max: number): Buffer {
  try {
    return gunzipSync(b, { maxOutputLength: max })
  } catch (err) {
    const tooBig = (err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE'
    throw new ValidationError(
      tooBig ? `Decompressed body is larger than ${max} bytes.` : 'Body is not valid gzip data.',
      null,
      tooBig ? 'payload_too_large' : 'invalid_compression',
    )
  }
}

function lz64(text: string): string {
  let out: string | null = null
  try {
    out = LZString.decompressFromBase64(text.trim())
  } catch {}
  if (!out) throw new ValidationError('Body is not valid lz-string (lz64) data.', null, 'invalid_compression')
  return out
}

function base64(text: string): Buffer {
  const clean = text.trim().replace(/ /g, '+')
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(clean)) {
    throw new ValidationError('The data field is not valid base64.', 'data', 'invalid_payload')
  }
  return Buffer.from(clean, 'base64')
}

function parseJson(text: string): unknown {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new ValidationError('Body is not valid JSON.', null, 'invalid_payload')
  }
  if (nestsDeeperThan(value, MAX_JSON_DEPTH)) {
    throw new ValidationError(`Body nests deeper than ${MAX_JSON_DEPTH} levels.`, null, 'invalid_payload')
  }
  return value
}

const utf8 = new TextDecoder('utf-8', { fatal: true })

function text(b: Buffer): string {
  try {
    return utf8.decode(b)
  } catch {
    throw new ValidationError('Body is not valid UTF-8.', null, 'invalid_payload')
  }
}

export function decodeBody(req: RawRequest): unknown {
  const compression = req.compression?.toLowerCase()
  let body = req.body
  if (body.length === 0) throw new ValidationError('Body is empty.', null, 'no_data')
  const encoding = req.contentEncoding?.toLowerCase()
  if (encoding === 'gzip' || compression === 'gzip-js' || compression === 'gzip' || isGzip(body)) {
    body = gunzip(body, req.maxDecompressedBytes)
  }
  if ((req.contentType ?? '').toLowerCase().startsWith('application/x-www-form-urlencoded')) {
    const form = new URLSearchParams(text(body))
    const data = form.get('data')
    if (data === null) throw new ValidationError('Form body has no data field.', 'data', 'no_data')
    if (compression === 'lz64' || compression === 'lz-string') return parseJson(lz64(data))
    const inner = base64(data)
    return parseJson(text(isGzip(inner) ? gunzip(inner, req.maxDecompressedBytes) : inner))
  }
  if (compression === 'lz64' || compression === 'lz-string') return parseJson(lz64(text(body)))
  const raw = text(body)
  const first = raw.trimStart()[0]
  // Some clients post base64 JSON without a form wrapper.
  if (first !== '{' && first !== '[') return parseJson(text(base64(raw)))
  return parseJson(raw)
}

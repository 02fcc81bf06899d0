import { gzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { decodeBody, type RawRequest } from '../../../src/capture/decode.ts'
import { OVERSIZE, type ReadLimits } from '../../../src/capture/json-reader.ts'
import type { AppError } from '../../../src/http/errors.ts'

// Bodies are strict UTF-8: ASCII ones (most) take a shorter road than the others, below and above
// the size from which the decoder works a megabyte at a time; the answers must not depend on it.
const limits = { maxEvents: 100_000, maxEventChars: 10_000_000, incrementalFrom: 256 * 1024 }
const decode = (body: Buffer) =>
  decodeBody(
    {
      body,
      contentType: 'application/json',
      contentEncoding: undefined,
      compression: undefined,
      maxDecompressedBytes: 100_000_000,
    },
    limits,
  )

/** A batch body of about `bytes` bytes whose event names are `name`. */
function batch(bytes: number, name: string): { text: string; events: number } {
  const one = JSON.stringify({ event: name, distinct_id: 'd', properties: { pad: 'x'.repeat(200) } })
  const events = Math.ceil(bytes / (Buffer.byteLength(one) + 1))
  return { text: `{"batch":[${Array.from({ length: events }, () => one).join(',')}]}`, events }
}

describe('capture body text', () => {
  it.each([
    ['small ASCII', 1_000, 'plain'],
    ['small with multibyte characters', 1_000, 'né 😀'],
    ['ASCII above a megabyte', 1_500_000, 'plain'],
    ['multibyte characters above a megabyte, across the slices', 2_500_000, 'ñ😀é'],
  ])('reads %s', async (_, bytes, name) => {
    const { text, events } = batch(bytes, name)
    const value = (await decode(Buffer.from(text))) as { batch: { event: string }[] }
    expect(value.batch).toHaveLength(events)
    expect(value.batch.every((e) => e.event === name)).toBe(true)
  })

  it('drops a leading byte order mark, as the UTF-8 decoder does', async () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf])
    expect(await decode(Buffer.concat([bom, Buffer.from('{"batch":[1]}')]))).toEqual({ batch: [1] })
  })

  it.each([
    ['small', 1_000],
    ['above a megabyte', 1_500_000],
  ])('refuses a %s body that is not UTF-8', async (_, bytes) => {
    const body = Buffer.from(batch(bytes, 'plain').text)
    body[Math.floor(body.length / 2)] = 0xff
    const err = (await decode(body).then(
      () => undefined,
      (e: unknown) => e,
    )) as AppError
    expect(err.status).toBe(400)
    expect(err.detail).toBe('Body is not valid UTF-8.')
  })
})

// Bodies from incrementalFrom on are read as bytes, never made one string: the answers must be the
// ones the text of the body gives. Here an item over 50 characters is OVERSIZE when read in parts.
const small: ReadLimits = { maxEvents: 100, maxEventChars: 50, incrementalFrom: 1_000 }
const request = (body: Buffer, more: Partial<RawRequest> = {}): RawRequest => ({
  body,
  contentType: 'application/json',
  contentEncoding: undefined,
  compression: undefined,
  maxDecompressedBytes: 100_000_000,
  ...more,
})
const answer = (req: RawRequest, l = small) =>
  decodeBody(req, l).then(
    (v) => ({ v }),
    (e: AppError) => ({ status: e.status, detail: e.detail }),
  )

/** `[{"big":"<60 of fill>"},1]` and blanks after it, `bytes` long in all. */
function padded(fill: string, bytes: number): Buffer {
  const text = `[{"big":"${fill.repeat(60)}"},1]`
  return Buffer.from(text + ' '.repeat(bytes - Buffer.byteLength(text)))
}

/** The wrappings a JSON body may come in (base64 without a form, a form of base64, gzip in both). */
const wrappings: [string, (json: Buffer) => RawRequest][] = [
  ['plain', (json) => request(json)],
  ['gzip', (json) => request(gzipSync(json), { contentEncoding: 'gzip' })],
  ['base64 without a form', (json) => request(Buffer.from(json.toString('base64')))],
  [
    'a form of base64',
    (json) =>
      request(Buffer.from(`data=${encodeURIComponent(json.toString('base64'))}`), {
        contentType: 'application/x-www-form-urlencoded',
      }),
  ],
  [
    'a form of gzip base64',
    (json) =>
      request(Buffer.from(`data=${encodeURIComponent(gzipSync(json).toString('base64'))}`), {
        contentType: 'application/x-www-form-urlencoded',
      }),
  ],
]

describe.each(wrappings)('a big body, %s', (_, wrap) => {
  it('is read in parts from exactly incrementalFrom bytes, in one go below', async () => {
    expect(await answer(wrap(padded('y', 999)))).toEqual({ v: [{ big: 'y'.repeat(60) }, 1] })
    expect(await answer(wrap(padded('y', 1_000)))).toEqual({ v: [OVERSIZE, 1] })
    expect(await answer(wrap(padded('y', 5_000)))).toEqual({ v: [OVERSIZE, 1] })
  })

  it('counts incrementalFrom in characters: multi-byte text under it is read in one go', async () => {
    // `[{"big":"` `"},1]` and 60 é: 74 characters, 134 bytes; blanks make it 1,059 bytes, 999 characters
    expect(await answer(wrap(padded('é', 1_059)))).toEqual({ v: [{ big: 'é'.repeat(60) }, 1] })
    expect(await answer(wrap(padded('é', 1_060)))).toEqual({ v: [OVERSIZE, 1] })
    // a 😀 is 4 bytes and 2 characters: 134 characters, 254 bytes
    expect(await answer(wrap(padded('😀', 1_119)))).toEqual({ v: [{ big: '😀'.repeat(60) }, 1] })
    expect(await answer(wrap(padded('😀', 1_120)))).toEqual({ v: [OVERSIZE, 1] })
  })

  it('reads multi-byte text beside the structure as JSON.parse does', async () => {
    const events = Array.from({ length: 80 }, (_, i) => ({
      event: `é${i}😀`,
      properties: { s: '中}],{"x":"\\"é', [`k${i}"}`]: ['😀]', { '}': 'é' }] },
    }))
    const text = JSON.stringify({ api_key: 'phc_é', batch: events, sent_at: '😀' })
    expect(Buffer.byteLength(text)).toBeGreaterThan(small.incrementalFrom * 5)
    const l = { ...small, maxEventChars: 10_000 }
    expect(await answer(wrap(Buffer.from(text)), l)).toEqual({ v: JSON.parse(text) })
  })

  it.each([
    ['inside a string', (b: Buffer) => b.indexOf('y'), [0xff]],
    ['between items', (b: Buffer) => b.indexOf(','), [0x80]],
    ['in the blanks after the body', (b: Buffer) => b.length - 5, [0xc3]],
    ['as an overlong slash', (b: Buffer) => b.indexOf('y'), [0xc0, 0xaf]],
    ['as an encoded surrogate', (b: Buffer) => b.indexOf('y'), [0xed, 0xa0, 0x80]],
    ['as a character cut short at the end', (b: Buffer) => b.length - 1, [0xe4, 0xb8]],
  ])('refuses invalid UTF-8 %s', async (_, where, bytes) => {
    const body = padded('y', 2_000)
    const at = where(body)
    const bad = Buffer.concat([body.subarray(0, at), Buffer.from(bytes), body.subarray(at + 1)])
    expect(await answer(wrap(bad))).toEqual({ status: 400, detail: 'Body is not valid UTF-8.' })
  })
})

describe('a big body read as bytes', () => {
  it('drops a leading byte order mark before counting its characters', async () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf])
    // 999 characters once the mark is dropped (1,002 bytes): read in one go
    expect(await answer(request(Buffer.concat([bom, padded('y', 999)])))).toEqual({
      v: [{ big: 'y'.repeat(60) }, 1],
    })
    expect(await answer(request(Buffer.concat([bom, padded('y', 1_000)])))).toEqual({ v: [OVERSIZE, 1] })
  })

  it('answers invalid JSON, too deep, too many events and a too long single event as before', async () => {
    const pad = ' '.repeat(1_000)
    const invalid = { status: 400, detail: 'Body is not valid JSON.' }
    expect(await answer(request(Buffer.from(`[{"é":1},]${pad}`)))).toEqual(invalid)
    expect(await answer(request(Buffer.from(`[{"é":1}]é${pad}`)))).toEqual(invalid)
    // not `{` or `[` first: taken for base64, as before
    expect(await answer(request(Buffer.from(`${pad}"é"`)))).toEqual({
      status: 400,
      detail: 'The data field is not valid base64.',
    })
    const deep = await answer(request(Buffer.from(`[${'['.repeat(128)}"😀"${']'.repeat(128)}]${pad}`)))
    expect(deep).toEqual({ status: 400, detail: 'Body nests deeper than 128 levels.' })
    const many = await answer(request(Buffer.from(`[${'{"é":1},'.repeat(100)}{"é":1}]${pad}`)))
    expect(many).toMatchObject({ status: 413 })
    expect((many as { detail: string }).detail).toContain('more than 100 events')
    const single = await answer(request(Buffer.from(`{"event":"x","p":"${'é'.repeat(49)}"}${pad}`)))
    expect(single).toEqual({ status: 413, detail: 'An event may be at most 50 characters of JSON.' })
    const fits = await answer(request(Buffer.from(`{"event":"x","p":"${'é'.repeat(48)}"}${pad}`)))
    expect(fits).toEqual({ v: { event: 'x', p: 'é'.repeat(48) } })
  })
})

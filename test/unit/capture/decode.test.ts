import { describe, expect, it } from 'vitest'
import { decodeBody } from '../../../src/capture/decode.ts'
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

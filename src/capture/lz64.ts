import { setImmediate as nextTurn } from 'node:timers/promises'
import { ValidationError } from '../http/errors.ts'

// posthog-js's legacy `?compression=lz64`: lz-string's compressToBase64 format. The lz-string
// package decompresses without any limit (45 KB of input became 200 million characters), so the
// format is decoded here with a cap on the output, checked as it grows.
//
// The format: the base64 text is a bit stream (6 bits a character, most significant first within
// the stream's own little-endian reading order: each character's bits are read from its highest
// value bit down). Codes are read `width` bits at a time, least significant bit first. Code 0 and
// 1 bring a new literal character of 8 or 16 bits, code 2 ends the stream, any other code names a
// dictionary entry; each step adds the previous entry plus the first character of the current one
// to the dictionary, and the code width grows by one bit whenever the dictionary outgrows it.

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/='
/** Each ASCII character code's value in ALPHABET, -1 if it has none (a table: a Map looked up a
 * one-character string made per character read) */
const VALUE = new Int8Array(128).fill(-1)
for (let i = 0; i < ALPHABET.length; i++) VALUE[ALPHABET.charCodeAt(i)] = i

/** The input is not lz-string base64. */
const invalid = () =>
  new ValidationError('Body is not valid lz-string (lz64) data.', null, 'invalid_compression')

class BitReader {
  private index = 0
  private current = 0
  /** the bit of `current` read next; 0 means load the next character */
  private mask = 0
  constructor(private readonly text: string) {}

  /** Reads `width` bits, least significant first. */
  read(width: number): number {
    let value = 0
    for (let bit = 0; bit < width; bit++) {
      if (this.mask === 0) {
        if (this.index >= this.text.length) throw invalid()
        const c = this.text.charCodeAt(this.index++)
        const v = c < 128 ? VALUE[c]! : -1
        if (v < 0) throw invalid()
        this.current = v
        this.mask = 32
      }
      if (this.current & this.mask) value |= 1 << bit
      this.mask >>= 1
    }
    return value
  }
}

/** How long decompression works before letting other requests run. */
const SLICE_MS = 10

/** How many characters of output are reported to `hold` at a time (the last ones at the end). */
const HOLD_STEP = 64 * 1024

/**
 * Decompresses lz-string base64 text, refusing (400 payload_too_large) as soon as the output
 * would exceed `maxChars`; invalid input is a 400 invalid_compression. An empty stream gives ''.
 * Gives way to other work every few milliseconds: the output may be megabytes. `hold` is told of
 * the output as it grows (the characters added since it was last called, every HOLD_STEP of them
 * and once at the end): what it throws stops the decompression, so a shared budget can refuse an
 * output before it is all made.
 */
export async function decompressLz64(
  input: string,
  maxChars: number,
  hold?: (chars: number) => void,
): Promise<string> {
  const text = input.trim()
  if (text.length === 0) throw invalid()
  const bits = new BitReader(text)
  const out: string[] = []
  let length = 0
  let held = 0
  const emit = (s: string) => {
    length += s.length
    if (length > maxChars) {
      throw new ValidationError(
        `Decompressed body is larger than ${maxChars} characters.`,
        null,
        'payload_too_large',
      )
    }
    if (hold && length - held >= HOLD_STEP) {
      hold(length - held)
      held = length
    }
    out.push(s)
  }
  const literal = (code: number) => String.fromCharCode(bits.read(code === 0 ? 8 : 16))

  // Codes 0-2 are reserved, so the first dictionary entry is 3; the first code is 2 bits wide.
  const dictionary: string[] = []
  let size = 3
  const first = bits.read(2)
  if (first === 2) return ''
  if (first === 3) throw invalid()
  let previous = literal(first)
  dictionary[size++] = previous
  emit(previous)
  // The width is 3 bits from here on; after four more entries, and then each time the entries
  // added since fill the next power of two, it grows by one bit.
  let width = 3
  let roomLeft = 4
  const grow = () => {
    if (--roomLeft === 0) {
      roomLeft = 2 ** width
      width++
    }
  }
  let sliceStart = performance.now()
  for (let step = 1; ; step++) {
    if ((step & 0x3ff) === 0 && performance.now() - sliceStart > SLICE_MS) {
      await nextTurn()
      sliceStart = performance.now()
    }
    let code = bits.read(width)
    if (code === 2) {
      if (hold && length > held) hold(length - held)
      return out.join('')
    }
    if (code === 0 || code === 1) {
      dictionary[size] = literal(code)
      code = size++
      grow()
    }
    let entry: string
    if (code < size && dictionary[code] !== undefined) entry = dictionary[code]!
    else if (code === size) entry = previous + previous[0]
    else throw invalid()
    emit(entry)
    dictionary[size++] = previous + entry[0]
    grow()
    previous = entry
  }
}

import { Readable } from 'node:stream'

// A large JSON answer written as it is serialized, a slice at a time with other requests answered
// in between: JSON.stringify of a 40 MB answer (50,000 rows × 400 columns) held the event loop for
// ~0.3-1 s and then the string itself. Only the array under `key` is sliced; the other fields are
// small and serialized whole.

/** Bytes of JSON text (about) per slice; each slice is one turn of the event loop. */
const SLICE_CHARS = 64 * 1024

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

/**
 * `value` as JSON text (the same as JSON.stringify's), streamed; `value[key]` must be an array.
 * With `within`, the text is `within.before + value + within.after`: how an answer whose large
 * array is nested deeper (`{"results": [{"people": [...]}]}`) is streamed.
 */
export function jsonStream(
  value: Record<string, unknown>,
  key: string,
  within: { before: string; after: string } = { before: '', after: '' },
): Readable {
  return Readable.from(slices(value, key, within), { objectMode: false })
}

async function* slices(
  value: Record<string, unknown>,
  key: string,
  within: { before: string; after: string },
): AsyncGenerator<string> {
  const items = value[key] as unknown[]
  const rest = Object.entries(value).filter(([k, v]) => k !== key && v !== undefined)
  let out = `${within.before}{${JSON.stringify(key)}:[`
  for (let i = 0; i < items.length; i++) {
    out += (i > 0 ? ',' : '') + (JSON.stringify(items[i]) ?? 'null')
    if (out.length >= SLICE_CHARS) {
      yield out
      out = ''
      await nextTurn()
    }
  }
  out += ']'
  for (const [k, v] of rest) out += `,${JSON.stringify(k)}:${JSON.stringify(v)}`
  yield `${out}}${within.after}`
}

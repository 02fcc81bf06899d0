// lz-string's compressToBase64 (posthog-js's ?compression=lz64), for tests that need large bodies:
// the package's own compressor hashes every dictionary word as it grows, and one letter repeated 30
// million times took two minutes; this one keeps the words in a trie and takes a fraction of a
// second. test/unit/capture/lz64.test.ts checks it writes what the package writes.
const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
/** A dictionary entry: its code and the entries one character longer. */
interface Word {
  code: number
  next: Map<number, Word>
}
/** lz-string base64 of `text`, whose characters must all be below 256 (JSON of ASCII text is). */
export function compressToLz64(text: string): string {
  const out: string[] = []
  let val = 0
  let pos = 0
  const put = (value: number, bits: number) => {
    for (let i = 0; i < bits; i++, value >>= 1) {
      val = (val << 1) | (value & 1)
      if (++pos === 6) {
        out.push(BASE64[val]!)
        val = 0
        pos = 0
      }
    }
  }
  // one-character entries by character; `fresh` those whose character has not been written yet
  const root = new Map<number, Word>()
  const fresh = new Set<number>()
  let size = 3
  let width = 2
  let roomLeft = 2
  const grow = () => {
    if (--roomLeft === 0) roomLeft = 2 ** width++
  }
  // a new character is written as a literal (code 0, then its 8 bits) the first time it ends a word
  const emit = (w: Word, first: number) => {
    if (w === root.get(first) && fresh.delete(first)) {
      put(0, width)
      put(first, 8)
      grow()
    } else put(w.code, width)
    grow()
  }
  let w: Word | undefined
  let wFirst = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c > 255) throw new Error('8-bit characters only')
    if (!root.has(c)) {
      root.set(c, { code: size++, next: new Map() })
      fresh.add(c)
    }
    const longer = w?.next.get(c)
    if (longer) w = longer
    else if (!w) {
      w = root.get(c)!
      wFirst = c
    } else {
      emit(w, wFirst)
      w.next.set(c, { code: size++, next: new Map() })
      w = root.get(c)!
      wFirst = c
    }
  }
  if (w) emit(w, wFirst)
  // code 2 ends the stream; the last character is filled with zero bits
  put(2, width)
  do {
    val <<= 1
  } while (++pos < 6)
  out.push(BASE64[val]!)
  const s = out.join('')
  return s + '='.repeat((4 - (s.length % 4)) % 4)
}

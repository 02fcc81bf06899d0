import { describe, expect, it } from 'vitest'
import {
  OVERSIZE,
  type ReadLimits,
  readCaptureBytes,
  readCaptureJson,
} from '../../../src/capture/json-reader.ts'
import type { AppError } from '../../../src/http/errors.ts'

// The incremental reader must give exactly what JSON.parse gives, and refuse what it refuses, both
// as it reads a string (lz64's output) and as it reads a body's UTF-8 bytes (every other body).
// incrementalFrom: 0 forces the item-by-item path on every input.
const limits: ReadLimits = { maxEvents: 1000, maxEventChars: 10_000, incrementalFrom: 0 }
const readers = [
  ['a string', (text: string, l: ReadLimits) => readCaptureJson(text, l)],
  ['UTF-8 bytes', (text: string, l: ReadLimits) => readCaptureBytes(Buffer.from(text), l)],
] as const

async function failureOf(
  read: (text: string, l: ReadLimits) => Promise<unknown>,
  text: string,
  l: ReadLimits,
) {
  try {
    await read(text, l)
  } catch (err) {
    return err as AppError
  }
  throw new Error(`accepted ${text}`)
}

describe.each(readers)('incremental capture JSON, read from %s', (_, reader) => {
  const read = (text: string, l = limits) => reader(text, l)
  const failure = (text: string, l = limits) => failureOf(reader, text, l)

  it.each([
    '[]',
    '{}',
    '  [ ]  ',
    '[1,"two",{"three":[3,{"x":null}]},true,false,null,-1.5e3]',
    '[{"event":"a","properties":{"s":"with ] and } and , and \\" inside","u":"\\u00e9\\ud83d\\ude00"}}]',
    '{"api_key":"phc_x","batch":[{"event":"a"},{"event":"b"}],"sent_at":"2024-01-01"}',
    '{"batch":[]}',
    '{"batch":5}',
    '{"batch":[1],"batch":[2,3]}',
    '{"a":1,"a":2}',
    '{"":0,"k":{"nested":{"batch":[9]}}}',
    '{"event":"single","properties":{"$set":{"a":[1,2,[3]]}}}',
    '\n\t{"batch" : [ {"e":1} , {"e":2} ] }\r\n',
    // runs of backslashes before a quote: an odd run escapes it, an even one does not
    '[{"a":"\\\\"},{"b":"x\\\\\\"]}{\\\\\\\\"},"\\"",{"c":"\\\\\\\\\\\\"}]',
    '{"batch":[{"k\\"":"\\\\"}],"sent_at":"\\\\\\""}',
    // object items whose text holds what looks like an item's end (`}` then `,{` or `]`)
    '[{"a":"},{"} , {"b":[{"c":1},{"d":"}]"}]},{"e":"}\\"},{"}\n]',
    '{"batch":[ {"a":{"b":{}},"c":[{},{}]} ,\t{"s":"}]"}],"x":{"y":[{}]}}',
    '[{"a":1},7,"s",[{"b":2},{}],null,{"c":{"d":[]}}]',
    // multi-byte characters right beside the structure, and structure inside strings: the byte
    // walk finds spans by ASCII bytes, and none of these may move an item's start or end
    '[{"a":"é"},{"b":"😀"},{"c":"中文"}]',
    '["é","😀","中",["é",["😀"]],{"中":{"é":["😀"]}}]',
    '[{"é":"}"},{"😀":"]"},{"中":"},{"},{"x":"é}]"}]',
    '{"batch":[{"e":"😀},{"},{"e":"中]"}],"é":"😀","中":["}",{"]":"é"}]}',
    '[{"a":"é\\\\"},{"b":"😀\\"},{\\\\"},{"c":"中\\\\\\\\"}]',
    '{"k😀\\"":"é\\\\","batch":[{"\\\\é":"\\"中\\""}]}',
    '[[["é"]],[{"a":[[],{}]}],{"b":[["😀",{"c":"]]}}"}]]}]',
    '[ {"e":"é"} ,\n{"e":"😀"}\t]',
  ])('reads %s as JSON.parse does', async (text) => {
    expect(await read(text)).toEqual(JSON.parse(text))
  })

  it('makes __proto__ an own property, as JSON.parse does', async () => {
    const text = '{"__proto__":{"polluted":true},"batch":[]}'
    const value = (await read(text)) as Record<string, unknown>
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype)
    expect(Object.hasOwn(value, '__proto__')).toBe(true)
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })

  it.each([
    '[',
    '[1,]',
    '[,1]',
    '[1 2]',
    '[1]]',
    '[1] x',
    '{"a":1,}',
    '{"a" 1}',
    '{"a":1 "b":2}',
    '{"a"::1}',
    '{1:2}',
    '{"a":1]',
    '["unterminated]',
    '["its last quote escaped\\"]',
    '{"batch":[1,]}',
    '{"batch":[1] 2}',
    '[{"a":1}{"b":2}]',
    '[{"a":1}},{"b":2}]',
    '[{"a":"},{"b":2}]',
    '{"batch":[{"a":1},{"b":2}] x}',
  ])('refuses %s as invalid JSON', async (text) => {
    expect(() => JSON.parse(text)).toThrow()
    const err = await failure(text)
    expect(err.status).toBe(400)
    expect(err.code).toBe('invalid_payload')
  })

  it('refuses nesting deeper than 128 levels and accepts 128', async () => {
    const nest = (depth: number) => `${'['.repeat(depth)}1${']'.repeat(depth)}`
    expect(await read(nest(128))).toEqual(JSON.parse(nest(128)))
    expect((await failure(nest(129))).detail).toContain('128')
    expect((await failure(`{"batch":[${nest(127)}]}`)).detail).toContain('128')
    expect((await failure(nest(100_000))).code).toBe('invalid_payload')
    // object items, counted from the level they are at
    const objects = (depth: number) => `${'{"k":'.repeat(depth)}1${'}'.repeat(depth)}`
    expect(await read(`[${objects(127)},{}]`)).toEqual(JSON.parse(`[${objects(127)},{}]`))
    expect((await failure(`[{},${objects(128)}]`)).detail).toContain('128')
    expect(await read(`{"batch":[${objects(126)}]}`)).toEqual(JSON.parse(`{"batch":[${objects(126)}]}`))
    expect((await failure(`{"batch":[${objects(127)},{}]}`)).detail).toContain('128')
  })

  it('refuses a body with several faults for the same one as when the batch was read after the walk', async () => {
    const eleven = `[${'{"e":1},'.repeat(10)}{"e":1}]`
    const capped = { ...limits, maxEvents: 10, maxEventChars: 100 }
    // a syntax error after a batch with too many events: invalid JSON, not the event cap
    expect((await failure(`{"batch":${eleven},"a":1 "b":2}`, capped)).status).toBe(400)
    // a member too long before it: that member's 413, not the event cap's
    const tooLong = await failure(`{"a":"${'x'.repeat(200)}","batch":${eleven}}`, capped)
    expect(tooLong.detail).not.toContain('10 events')
    expect((await failure(`{"batch":${eleven},"a":"${'x'.repeat(200)}"}`, capped)).detail).toContain(
      '10 events',
    )
  })

  it('stops at the event cap before reading the rest (413)', async () => {
    const err = await failure(`[${'{"e":1},'.repeat(10)}{"e":1}]`, { ...limits, maxEvents: 10 })
    expect(err.status).toBe(413)
    expect(err.detail).toContain('10 events')
    expect(await read(`{"batch":[${'{},'.repeat(9)}{}]}`, { ...limits, maxEvents: 10 })).toEqual({
      batch: Array.from({ length: 10 }, () => ({})),
    })
  })

  it('leaves a batch item too long for one event unread, and refuses a single event that long', async () => {
    const big = `{"event":"big","p":"${'x'.repeat(200)}"}`
    const value = (await read(`{"batch":[{"event":"small"},${big}]}`, { ...limits, maxEventChars: 100 })) as {
      batch: unknown[]
    }
    expect(value.batch).toEqual([{ event: 'small' }, OVERSIZE])
    const single = await failure(`{"event":"big","properties":{"p":"${'x'.repeat(200)}"}}`, {
      ...limits,
      maxEventChars: 100,
    })
    expect(single.status).toBe(413)
  })

  it('parses small bodies in one go with the same answers', async () => {
    const small = { ...limits, incrementalFrom: 1_000_000 }
    expect(await read('{"batch":[1,2]}', small)).toEqual({ batch: [1, 2] })
    expect((await failure('[1,]', small)).code).toBe('invalid_payload')
    expect((await failure(`${'['.repeat(200)}${']'.repeat(200)}`, small)).code).toBe('invalid_payload')
  })

  it('counts an item against the limit in UTF-16 characters, not bytes', async () => {
    const l = { ...limits, maxEventChars: 20 }
    // `{"e":"` and `"}` are 8 characters: each item is 20 characters long, 32 bytes or more
    const at = ['é'.repeat(12), '😀'.repeat(6), '中'.repeat(12)]
    for (const s of at) {
      expect(await read(`[{"e":"${s}"},{"e":1}]`, l)).toEqual([{ e: s }, { e: 1 }])
      expect(await read(`{"batch":[{"e":1},{"e":"${s}"}]}`, l)).toEqual({ batch: [{ e: 1 }, { e: s }] })
      expect(await read(`[{"e":"${s}x"},{"e":1}]`, l)).toEqual([OVERSIZE, { e: 1 }])
      expect(await read(`{"batch":[{"e":1},{"e":"x${s}"}]}`, l)).toEqual({ batch: [{ e: 1 }, OVERSIZE] })
    }
    // items that are not objects (the walk, not the quick read), and blanks around an item count
    expect(await read(`["${'😀'.repeat(9)}",1]`, l)).toEqual(['😀'.repeat(9), 1])
    expect(await read(`["${'😀'.repeat(9)}x",1]`, l)).toEqual([OVERSIZE, 1])
    expect(await read(`[ {"e":"${'é'.repeat(10)}"} ,1]`, l)).toEqual([{ e: 'é'.repeat(10) }, 1])
    expect(await read(`[ {"e":"${'é'.repeat(11)}"} ,1]`, l)).toEqual([OVERSIZE, 1])
    // a member of an event that is not a batch: its value's text, 20 characters, then 21
    expect(await read(`{"event":"x","p":"${'😀'.repeat(9)}"}`, l)).toEqual({ event: 'x', p: '😀'.repeat(9) })
    expect((await failure(`{"event":"x","p":"${'😀'.repeat(9)}a"}`, l)).status).toBe(413)
  })

  it('reads a body in one go below incrementalFrom characters, however many bytes', async () => {
    // `[{"e":"` and `"}]` are 10 characters; an item over 5 characters is OVERSIZE when read in parts
    const l = { ...limits, maxEventChars: 5, incrementalFrom: 20 }
    expect(await read(`[{"e":"${'é'.repeat(9)}"}]`, l)).toEqual([{ e: 'é'.repeat(9) }])
    expect(await read(`[{"e":"${'😀'.repeat(4)}é"}]`, l)).toEqual([{ e: `${'😀'.repeat(4)}é` }])
    expect(await read(`[{"e":"${'é'.repeat(10)}"}]`, l)).toEqual([OVERSIZE])
    expect(await read(`[{"e":"${'😀'.repeat(5)}"}]`, l)).toEqual([OVERSIZE])
  })

  it('takes white space as trim() does around the body and in an empty batch', async () => {
    const spaces: number[] = []
    for (let c = 0; c <= 0xffff; c++) if (/\s/.test(String.fromCharCode(c))) spaces.push(c)
    expect(spaces.length).toBe(25)
    for (const c of spaces) {
      const ch = String.fromCharCode(c)
      expect(await read(`${ch}[1,2]${ch}`)).toEqual([1, 2])
      expect(await read(`{"batch":[${ch}]}`)).toEqual({ batch: [] })
      expect(await read(`{"a":1,"batch":${ch}[1]}${ch}`)).toEqual({ a: 1, batch: [1] })
    }
    for (const ch of ['\u200b', '\u0085', '\u00a1', '\u180e', '\u1fff', '\ufeff\u00a1']) {
      expect((await failure(`${ch}[1,2]`)).code).toBe('invalid_payload')
      expect((await failure(`[1,2]${ch}`)).code).toBe('invalid_payload')
      expect((await failure(`{"batch":[${ch}]}`)).code).toBe('invalid_payload')
    }
  })

  it('agrees with JSON.parse on varied texts, whole or broken', async () => {
    const rand = seeded(17)
    for (let n = 0; n < 3_000; n++) {
      const text = mutate(rand, JSON.stringify(value(rand, 0)))
      let expected: unknown
      try {
        expected = JSON.parse(text)
      } catch {
        expect((await failure(text)).code, text).toBe('invalid_payload')
        continue
      }
      expect(await read(text), text).toEqual(expected)
    }
  })
})

// The spans of the byte walk and of the string walk are the same: with a small item limit as well.
it('reads bytes as it reads the string, item limits included', async () => {
  const rand = seeded(29)
  const l = { ...limits, maxEventChars: 24, maxEvents: 6 }
  const answer = (p: Promise<unknown>) =>
    p.then(
      (v) => ({ v }),
      (e: AppError) => ({ status: e.status, detail: e.detail }),
    )
  for (let n = 0; n < 3_000; n++) {
    const text = mutate(rand, JSON.stringify(value(rand, 0)))
    expect(await answer(readers[1][1](text, l)), text).toEqual(await answer(readers[0][1](text, l)))
  }
})

/** A small deterministic random source (Park-Miller). */
function seeded(seed: number): () => number {
  let s = seed
  return () => {
    s = (s * 48271) % 2147483647
    return s / 2147483647
  }
}

const pieces = [
  'a',
  '"',
  '\\',
  '}',
  ']',
  '{',
  '[',
  ',',
  ':',
  ' ',
  'é',
  '😀',
  '中',
  '\u2028',
  '\\"',
  'x}',
  '],{',
]
const pick = <T>(rand: () => number, xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!

function str(rand: () => number): string {
  let s = ''
  for (let k = Math.floor(rand() * 8); k > 0; k--) s += pick(rand, pieces)
  return s
}

/** A value like a capture body: arrays of objects, a batch object, nesting, strings full of structure. */
function value(rand: () => number, depth: number): unknown {
  const r = rand()
  if (depth > 4 || r < 0.3) return pick(rand, [str(rand), 1, -2.5e3, true, null, str(rand)])
  if (r < 0.6) return Array.from({ length: Math.floor(rand() * 4) }, () => value(rand, depth + 1))
  const o: Record<string, unknown> = {}
  for (let k = Math.floor(rand() * 4); k > 0; k--)
    o[rand() < 0.2 ? 'batch' : str(rand)] = value(rand, depth + 1)
  return o
}

/** `text` as it is, or with a code point inserted or removed (never half a surrogate pair). */
function mutate(rand: () => number, text: string): string {
  const chars = Array.from(text)
  const r = rand()
  const at = Math.floor(rand() * (chars.length + 1))
  if (r < 0.3)
    chars.splice(at, 0, pick(rand, ['"', '\\', '}', ']', '{', '[', ',', ':', 'é', '😀', 'x', '1', ' ']))
  else if (r < 0.6) chars.splice(at, 1)
  return chars.join('')
}

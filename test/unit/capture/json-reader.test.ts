import { describe, expect, it } from 'vitest'
import { OVERSIZE, readCaptureJson } from '../../../src/capture/json-reader.ts'
import { AppError } from '../../../src/http/errors.ts'

// The incremental reader must give exactly what JSON.parse gives, and refuse what it refuses.
// incrementalFrom: 0 forces the item-by-item path on every input.
const limits = { maxEvents: 1000, maxEventChars: 10_000, incrementalFrom: 0 }
const read = (text: string, l = limits) => readCaptureJson(text, l)

async function failure(text: string, l = limits): Promise<AppError> {
  try {
    await read(text, l)
  } catch (err) {
    return err as AppError
  }
  throw new Error(`accepted ${text}`)
}

describe('incremental capture JSON', () => {
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
})

// Pure modules of the browser code (plain ES modules, loaded here as they are served).
import { pathToFileURL } from 'node:url'
import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

const web = (f: string) => pathToFileURL(resolve(import.meta.dirname, '../../../src/console/web/lib', f)).href

/* eslint-disable @typescript-eslint/no-explicit-any -- untyped browser modules */
const shape: any = await import(web('chart-shape.js'))
const tokens: any = await import(web('hogql-tokens.js'))
const sse: any = await import(web('sse.js'))
/* eslint-enable @typescript-eslint/no-explicit-any */

describe('chartShape', () => {
  it('one number: a big number', () => {
    expect(shape.chartShape(['count()'], ['UInt64'], [[42]]).kinds).toEqual(['number'])
  })

  it('a time column and numbers: a line first, bars too when short', () => {
    const s = shape.chartShape(
      ['day', 'c'],
      ['Date', 'UInt64'],
      [
        ['2024-01-01', 1],
        ['2024-01-02', 3],
      ],
    )
    expect(s).toEqual({ kinds: ['line', 'bar'], x: 0, y: [1] })
  })

  it('text and numbers: bars; reads kinds from values when types are missing', () => {
    const s = shape.chartShape(
      ['event', 'c'],
      [],
      [
        ['a', 1],
        ['b', 2],
      ],
    )
    expect(s).toEqual({ kinds: ['bar'], x: 0, y: [1] })
  })

  it('no numbers or no rows: no chart', () => {
    expect(shape.chartShape(['e'], ['String'], [['a']]).kinds).toEqual([])
    expect(shape.chartShape(['c'], ['UInt64'], []).kinds).toEqual([])
  })

  it('reads dates as UTC wall clock', () => {
    expect(shape.toEpochSeconds('2024-01-02')).toBe(Date.UTC(2024, 0, 2) / 1000)
    expect(shape.toEpochSeconds('2024-01-02 10:00:00')).toBe(Date.UTC(2024, 0, 2, 10) / 1000)
    expect(shape.toEpochSeconds('2024-01-02T10:00:00+02:00')).toBe(Date.UTC(2024, 0, 2, 8) / 1000)
  })
})

describe('HogQL highlighting', () => {
  it('covers the text exactly with typed tokens', () => {
    const text = "SELECT count(), 'a''b' -- note\nFROM events WHERE x = {v} AND 1.5e3 > 0"
    const ts = tokens.tokenize(text)
    expect(ts.map((t: { start: number; end: number }) => text.slice(t.start, t.end)).join('')).toBe(text)
    const typeOf = (s: string) => ts.find((t: { start: number }) => t.start === text.indexOf(s)).type
    expect(typeOf('SELECT')).toBe('kw')
    expect(typeOf('count')).toBe('fn')
    expect(typeOf('-- note')).toBe('com')
    expect(typeOf('events')).toBe('id')
    expect(typeOf('{v}')).toBe('ph')
    expect(typeOf('1.5e3')).toBe('num')
  })

  it('marks exactly the error range, or one character for an empty one', () => {
    const marked = (text: string, s: number | null, e: number | null) =>
      tokens
        .highlightPieces(text, s, e)
        .filter((p: { err: boolean }) => p.err)
        .map((p: { text: string }) => p.text)
        .join('')
    expect(marked('SELECT foo(bar) FROM events', 7, 15)).toBe('foo(bar)')
    expect(marked('SELECT foo', 8, 10)).toBe('oo')
    expect(marked('SELECT', 6, 6)).toBe('T')
    expect(marked('SELECT', null, null)).toBe('')
  })
})

describe('parseSse', () => {
  it('splits complete events and keeps the rest', () => {
    const out = sse.parseSse('event: status\ndata: {"a":1}\n\n: keep-alive\n\ndata: x\ndata: y\n\nevent: par')
    expect(out.events).toEqual([
      { event: 'status', data: '{"a":1}' },
      { event: 'message', data: 'x\ny' },
    ])
    expect(out.rest).toBe('event: par')
  })
})

// Trends formulas ('A + B', '(A - B) / A * 100'): series letters in query order, numbers,
// + - * / and parentheses, evaluated point by point. A division by zero gives 0.
import { ValidationError } from '../../../http/errors.ts'

type Node =
  | { k: 'num'; v: number }
  | { k: 'ref'; i: number }
  | { k: 'neg'; e: Node }
  | { k: 'bin'; op: string; l: Node; r: Node }

function tokenize(src: string): string[] {
  const tokens = src.match(/\s*(\d+(?:\.\d+)?|[A-Za-z]|[-+*/()])/g)
  if (!tokens || tokens.join('').replace(/\s/g, '') !== src.replace(/\s/g, '')) {
    throw new ValidationError(`Invalid formula '${src}'`, 'trendsFilter.formula')
  }
  return tokens.map((t) => t.trim())
}

export function parseFormula(src: string, seriesCount: number): Node {
  const t = tokenize(src)
  let p = 0
  const fail = (): never => {
    throw new ValidationError(`Invalid formula '${src}'`, 'trendsFilter.formula')
  }
  const primary = (): Node => {
    const tok = t[p++]
    if (tok === undefined) return fail()
    if (tok === '(') {
      const e = sum()
      if (t[p++] !== ')') fail()
      return e
    }
    if (tok === '-') return { k: 'neg', e: primary() }
    if (/^\d/.test(tok)) return { k: 'num', v: Number(tok) }
    if (/^[A-Za-z]$/.test(tok)) {
      const i = tok.toUpperCase().charCodeAt(0) - 65
      if (i >= seriesCount) {
        throw new ValidationError(
          `Formula '${src}' names series ${tok}, which does not exist`,
          'trendsFilter.formula',
        )
      }
      return { k: 'ref', i }
    }
    return fail()
  }
  const product = (): Node => {
    let l = primary()
    while (t[p] === '*' || t[p] === '/') {
      const op = t[p++]!
      l = { k: 'bin', op, l, r: primary() }
    }
    return l
  }
  const sum = (): Node => {
    let l = product()
    while (t[p] === '+' || t[p] === '-') {
      const op = t[p++]!
      l = { k: 'bin', op, l, r: product() }
    }
    return l
  }
  const out = sum()
  if (p !== t.length) fail()
  return out
}

function evalAt(n: Node, series: number[][], i: number): number {
  switch (n.k) {
    case 'num':
      return n.v
    case 'ref':
      return series[n.i]?.[i] ?? 0
    case 'neg':
      return -evalAt(n.e, series, i)
    case 'bin': {
      const l = evalAt(n.l, series, i)
      const r = evalAt(n.r, series, i)
      if (n.op === '+') return l + r
      if (n.op === '-') return l - r
      if (n.op === '*') return l * r
      return r === 0 ? 0 : l / r
    }
  }
}

/** Applies a parsed formula to equally long series. */
export function applyFormula(n: Node, series: number[][]): number[] {
  const len = Math.max(0, ...series.map((s) => s.length))
  return Array.from({ length: len }, (_, i) => evalAt(n, series, i))
}

// The layout rules of docs/architecture.md, checked on the source tree itself.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

const root = resolve(import.meta.dirname, '../..')
const src = join(root, 'src')

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) return tsFiles(p)
    return p.endsWith('.ts') ? [p] : []
  })
}

/** Every relative import of a file, type-only ones included, as absolute paths. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8')
  const out: string[] = []
  for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)['"](\.{1,2}\/[^'"]+)['"]/g)) {
    out.push(resolve(dirname(file), m[1]!))
  }
  return out
}

/** Strongly connected components with more than one file (Tarjan). */
export function cycles(graph: Map<string, string[]>): string[][] {
  let index = 0
  const idx = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const found: string[][] = []
  const visit = (v: string) => {
    idx.set(v, index)
    low.set(v, index++)
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue
      if (!idx.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!))
    }
    if (low.get(v) === idx.get(v)) {
      const comp: string[] = []
      let w: string
      do {
        w = stack.pop()!
        onStack.delete(w)
        comp.push(w)
      } while (w !== v)
      if (comp.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(comp)
    }
  }
  for (const v of graph.keys()) if (!idx.has(v)) visit(v)
  return found
}

describe('source layout', () => {
  it('finds a cycle when there is one (checks the checker)', () => {
    const g = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ])
    expect(cycles(g).map((c) => c.sort())).toEqual([['a', 'b', 'c']])
  })

  it('has no import cycle in src/, type-only imports included', () => {
    const graph = new Map(tsFiles(src).map((f) => [f, importsOf(f)]))
    const found = cycles(graph).map((c) => c.map((f) => relative(root, f)).sort())
    expect(found).toEqual([])
  })

  it('keeps every top-level entry of src/ a folder (a feature or a named piece of infrastructure)', () => {
    const loose = readdirSync(src).filter((n) => !statSync(join(src, n)).isDirectory())
    expect(loose).toEqual([])
  })

  it('gives every source file over 400 lines a reason at its top', () => {
    const long = tsFiles(src).filter((f) => {
      const text = readFileSync(f, 'utf8')
      return text.split('\n').length > 400 && !/^\/\/ Long because /m.test(text.slice(0, 600))
    })
    expect(long.map((f) => relative(root, f))).toEqual([])
  })
})

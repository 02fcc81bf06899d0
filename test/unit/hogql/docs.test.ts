// Every exported definition of src/hogql/ says in one doc comment what it promises (issue 20).
import { readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

const dir = resolve(import.meta.dirname, '../../../src/hogql')

/** `file:line: text` of each exported definition not directly preceded by a `/** ... *\/` comment. */
function undocumented(text: string, file: string): string[] {
  const lines = text.split('\n')
  const out: string[] = []
  lines.forEach((line, i) => {
    if (!/^export (declare )?(async )?(function|const|let|interface|type|class|enum) [A-Za-z_$]/.test(line))
      return
    let j = i - 1
    while (j >= 0 && lines[j]!.trim() === '') j--
    if (!/\*\/\s*$/.test(lines[j] ?? '')) out.push(`${file}:${i + 1}: ${line}`)
  })
  return out
}

describe('src/hogql documentation', () => {
  it('finds an undocumented export (checks the checker)', () => {
    const text =
      '/** ok */\nexport const a = 1\n// plain\nexport function b() {}\nexport type { C } from "x"\n'
    expect(undocumented(text, 'x.ts')).toEqual(['x.ts:4: export function b() {}'])
  })

  it('documents every exported function, type, class and constant', () => {
    const missing = readdirSync(dir)
      .filter((f) => f.endsWith('.ts'))
      .flatMap((f) => undocumented(readFileSync(join(dir, f), 'utf8'), f))
    expect(missing).toEqual([])
  })
})

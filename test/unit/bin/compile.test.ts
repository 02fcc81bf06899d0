import { execFileSync } from 'node:child_process'
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
// @ts-expect-error plain JavaScript launcher code (bin/), no type declarations
import { compiledEntry } from '../../../bin/compile.js'

const REPO = join(import.meta.dirname, '..', '..', '..')

// A checkout of three files: cmd/main.ts imports src/lib.ts and reads schema/a.sql beside its source.
function tree(): string {
  const root = mkdtempSync(join(tmpdir(), 'burrow-compile-'))
  for (const d of ['cmd', 'src', 'schema']) mkdirSync(join(root, d))
  symlinkSync(join(REPO, 'node_modules'), join(root, 'node_modules'))
  writeFileSync(join(root, 'tsconfig.json'), '{ "compilerOptions": { "verbatimModuleSyntax": true } }')
  writeFileSync(join(root, 'schema', 'a.sql'), 'SELECT 1')
  writeFileSync(
    join(root, 'src', 'lib.ts'),
    'export const answer = (n: number): string => `v1 ${n}`\nexport type Unused = { a: number }\n',
  )
  writeFileSync(
    join(root, 'cmd', 'main.ts'),
    [
      "import { readFileSync } from 'node:fs'",
      "import { join } from 'node:path'",
      "import { answer, type Unused } from '../src/lib.ts'",
      'const u: Unused = { a: 1 }',
      "console.log(answer(u.a), readFileSync(join(import.meta.dirname, '..', 'schema', 'a.sql'), 'utf8'))",
    ].join('\n'),
  )
  return root
}

/** The names of this process's children (any thread's). */
function children(): string[] {
  return readdirSync(`/proc/${process.pid}/task`).flatMap((t) =>
    readFileSync(`/proc/${process.pid}/task/${t}/children`, 'utf8')
      .split(' ')
      .filter(Boolean)
      .map((pid) => readFileSync(`/proc/${pid}/comm`, 'utf8').trim()),
  )
}

const run = (url: string) => execFileSync(process.execPath, [fileURLToPath(url)], { encoding: 'utf8' }).trim()

describe('bin/compile.js: the build Burrow runs', () => {
  const roots: string[] = []
  afterAll(() => {
    for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true })
  })

  it('runs the sources as JavaScript, with relative imports and paths resolving as from the sources', async () => {
    const root = tree()
    roots.push(root)
    const cache = join(root, 'cache')
    const esbuilds = () => children().filter((name) => name === 'esbuild').length
    const before = esbuilds()
    const url = await compiledEntry('cmd/main.ts', { root, cache })
    expect(url).toMatch(/\/cache\/js-[0-9a-f]{20}\/cmd\/main\.js$/)
    expect(run(url)).toBe('v1 1 SELECT 1')
    // no esbuild service left running by the build (~100 MiB), nothing written beside the sources
    // (it exits a moment after being told to stop)
    for (let i = 0; i < 40 && esbuilds() > before; i++) await new Promise((r) => setTimeout(r, 50))
    expect(esbuilds()).toBe(before)
    expect(readdirSync(join(root, 'cmd'))).toEqual(['main.ts'])
  })

  it('builds again when a source changes, and reuses a build while none does', async () => {
    const root = tree()
    roots.push(root)
    const cache = join(root, 'cache')
    const first = await compiledEntry('cmd/main.ts', { root, cache })
    expect(await compiledEntry('cmd/main.ts', { root, cache })).toBe(first)
    writeFileSync(join(root, 'src', 'lib.ts'), 'export const answer = (n: number): string => `v2 ${n}`\n')
    const second = await compiledEntry('cmd/main.ts', { root, cache })
    expect(second).not.toBe(first)
    expect(run(second)).toBe('v2 1 SELECT 1')
    // a file added (not TypeScript) makes a new build too: the build links each file
    writeFileSync(join(root, 'schema', 'b.sql'), 'SELECT 2')
    const third = await compiledEntry('cmd/main.ts', { root, cache })
    expect(third).not.toBe(second)
    expect(existsSync(join(fileURLToPath(third), '..', '..', 'schema', 'b.sql'))).toBe(true)
  })

  it('refuses to build a source that does not compile (the launcher then runs tsx)', async () => {
    const root = tree()
    roots.push(root)
    writeFileSync(join(root, 'src', 'lib.ts'), 'export const = 1\n')
    await expect(compiledEntry('cmd/main.ts', { root, cache: join(root, 'cache') })).rejects.toThrow()
    expect(readdirSync(join(root, 'cache'))).toEqual([])
  })
})

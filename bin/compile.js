// Burrow's TypeScript compiled ahead of time, into a cache keyed by the sources' hash, so that the
// processes of `burrow start` run plain JavaScript: no tsx loader thread, no esbuild service process
// beside each of them, no compiling at every start (docs/operations.md, "Memory").
//
// The build mirrors the tree (cmd/, src/, schema/: each .ts file becomes a .js file at the same
// relative path; every other file is a symbolic link to the original, and bin/ is one too), so that
// paths a module computes from its own location (schema files, the console's assets, bin/burrow.js)
// resolve as they do from the sources. It lives in node_modules/.cache/burrow/, inside the checkout's
// node_modules, so that packages resolve from it as from the sources; `npm ci` throws it away.
// Any change to a source file, or a file added or removed, makes a new hash and a new build at the
// next start; nothing is written beside the sources.
import { createHash } from 'node:crypto'
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import { dirname, join, relative } from 'node:path'
import process from 'node:process'
import { pathToFileURL } from 'node:url'

const ROOT = join(import.meta.dirname, '..')
const TREES = ['cmd', 'src', 'schema']
// Builds not used for this long are removed when another one is made.
const STALE_MS = 7 * 24 * 3600 * 1000

function listFiles(dir) {
  const out = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...listFiles(path))
    else if (entry.isFile()) out.push(path)
  }
  return out
}

/** Every file of the mirrored trees, relative to the root, sorted. */
function sourceFiles(root) {
  return TREES.flatMap((t) => (existsSync(join(root, t)) ? listFiles(join(root, t)) : []))
    .map((p) => relative(root, p))
    .sort()
}

/**
 * The hash of what decides a build: the checkout's place (the build links to its files), every .ts
 * file's path and content, the other files' paths, tsconfig.json, this file, esbuild's and node's
 * versions.
 */
function sourceHash(root, files) {
  const h = createHash('sha256')
  const esbuild = JSON.parse(readFileSync(join(root, 'node_modules', 'esbuild', 'package.json'), 'utf8'))
  h.update(`${esbuild.version} ${process.versions.node} ${root}\n`)
  // this file: how the build is made
  h.update(readFileSync(import.meta.filename))
  h.update(readFileSync(join(root, 'tsconfig.json')))
  for (const f of files) {
    h.update(`\0${f}\0`)
    if (f.endsWith('.ts')) h.update(readFileSync(join(root, f)))
  }
  return h.digest('hex').slice(0, 20)
}

async function build(root, files, out) {
  const esbuild = await import('esbuild')
  const ts = files.filter((f) => f.endsWith('.ts'))
  try {
    await esbuild.build({
      absWorkingDir: root,
      entryPoints: ts,
      outdir: out,
      outbase: root,
      // Each file alone: every import stays an import, relative ones renamed from .ts to .js.
      bundle: true,
      packages: 'external',
      plugins: [
        {
          name: 'relative-imports',
          setup(b) {
            b.onResolve({ filter: /^\.\.?\// }, (args) =>
              args.kind === 'entry-point'
                ? undefined
                : { path: args.path.replace(/\.ts$/, '.js'), external: true },
            )
          },
        },
      ],
      format: 'esm',
      platform: 'node',
      target: `node${process.versions.node}`,
      tsconfig: join(root, 'tsconfig.json'),
      // written beside each file; used when node runs with --enable-source-maps
      sourcemap: 'linked',
      logLevel: 'silent',
    })
  } finally {
    // its service process (~100 MiB) would otherwise live as long as Burrow does
    await esbuild.stop()
  }
  for (const f of files.filter((f) => !f.endsWith('.ts'))) {
    mkdirSync(dirname(join(out, f)), { recursive: true })
    symlinkSync(join(root, f), join(out, f))
  }
  if (existsSync(join(root, 'bin'))) symlinkSync(join(root, 'bin'), join(out, 'bin'))
  // node_modules is a package boundary: without its own package.json the build's files would be CommonJS.
  writeFileSync(join(out, 'package.json'), '{ "type": "module", "private": true }\n')
}

function removeStale(cache, keep) {
  for (const name of readdirSync(cache)) {
    if (name === keep) continue
    const path = join(cache, name)
    try {
      if (Date.now() - statSync(path).mtimeMs > STALE_MS) rmSync(path, { recursive: true, force: true })
    } catch {
      // removed by another process meanwhile
    }
  }
}

/**
 * The file URL of `entry` (a path relative to the root, e.g. `cmd/burrow.ts`) in the build of the
 * current sources, building it first if no process has yet. Throws when it cannot be built (e.g. a
 * read-only node_modules); the caller then runs the sources through tsx. `root` and `cache` are
 * for tests (another tree, another cache folder).
 */
export async function compiledEntry(
  entry,
  { root = ROOT, cache = join(root, 'node_modules', '.cache', 'burrow') } = {},
) {
  const files = sourceFiles(root)
  const hash = sourceHash(root, files)
  const dir = join(cache, `js-${hash}`)
  if (!existsSync(join(dir, 'package.json'))) {
    mkdirSync(cache, { recursive: true })
    const tmp = join(cache, `tmp-${process.pid}-${Date.now()}`)
    try {
      await build(root, files, tmp)
      // Atomic: concurrent starts (the tests start many) each build, and the first rename wins.
      renameSync(tmp, dir)
      removeStale(cache, `js-${hash}`)
    } catch (err) {
      rmSync(tmp, { recursive: true, force: true })
      if (!existsSync(join(dir, 'package.json'))) throw err
    }
  } else {
    // marks it in use, for removeStale
    utimesSync(dir, new Date(), new Date())
  }
  return pathToFileURL(join(dir, entry.replace(/\.ts$/, '.js'))).href
}

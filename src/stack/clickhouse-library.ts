// Which ClickHouse Burrow runs when CLICKHOUSE_URL is not given: chdb's library
// (`@chdb/lib-<platform>`), ClickHouse's own engine built as one shared library, run as a server by
// clickhouse-server.ts. package.json carries it as an optional dependency, so `npm ci` installs the
// build for the machine it runs on; a platform whose build the lock file does not carry gets it
// installed on first start into Burrow's cache (npm-cache.ts).
import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { hasPackage, installCached } from './npm-cache.ts'

/**
 * The release `npm start` runs: the newest chdb build whose command-line entry point starts
 * ClickHouse's own listeners (`SYSTEM START LISTEN`). Builds before 26.7 refuse it ("not supported
 * in clickhouse-local"), so they cannot be a server (docs/operations.md, "The embedded ClickHouse").
 */
export const CLICKHOUSE_LIB_VERSION = '26.7.3-stable.1'

/** The platform's chdb package, or an error naming what chdb does not ship. */
export function clickhouseLibPackage(): string {
  const { platform, arch } = process
  if (platform === 'darwin' && (arch === 'arm64' || arch === 'x64')) return `@chdb/lib-darwin-${arch}`
  if (platform === 'linux' && (arch === 'arm64' || arch === 'x64')) {
    // process.report tells glibc from musl; chdb ships glibc builds only.
    const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)
      ?.header
    if (header && !header.glibcVersionRuntime)
      throw new Error('the embedded ClickHouse has no build for musl libc: set CLICKHOUSE_URL')
    return `@chdb/lib-linux-${arch}-gnu`
  }
  throw new Error(`the embedded ClickHouse has no build for ${platform}-${arch}: set CLICKHOUSE_URL`)
}

/** libchdb.so (or .dylib) in a package directory. */
function libraryIn(pkgDir: string): string {
  const lib = readdirSync(pkgDir).find((f) => /^libchdb\.(so|dylib)$/.test(f))
  if (!lib) throw new Error(`no libchdb in ${pkgDir}`)
  return join(pkgDir, lib)
}

/** The package's directory as the project installed it, when it is `version`. */
function projectPackage(pkg: string, version: string): string | undefined {
  try {
    const json = createRequire(import.meta.url).resolve(`${pkg}/package.json`)
    return (JSON.parse(readFileSync(json, 'utf8')) as { version?: string }).version === version
      ? dirname(json)
      : undefined
  } catch {
    return undefined
  }
}

/**
 * The path of libchdb for `version` (default CLICKHOUSE_LIB_VERSION): the project's own
 * installation when it has that build, else one installed into Burrow's cache on first use.
 */
export async function clickhouseLibrary(
  version = CLICKHOUSE_LIB_VERSION,
  onInstall?: (what: string) => void,
): Promise<string> {
  const pkg = clickhouseLibPackage()
  const own = projectPackage(pkg, version)
  if (own) return libraryIn(own)
  const spec = `${pkg}@${version}`
  const dir = await installCached(`clickhouse-${version}`, [spec], () => onInstall?.(spec))
  if (!hasPackage(dir, pkg)) throw new Error(`${spec} did not install into ${dir}`)
  return libraryIn(join(dir, 'node_modules', pkg))
}

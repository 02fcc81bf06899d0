// Installs chdb (ClickHouse 26.x as a library, ~550 MB) on demand into a cache directory, outside the
// project's package.json, so `npm ci && npm start` never downloads it. Safe to call from several
// processes at once: one installs under a lock file, the others wait for its marker.
import { spawn } from 'node:child_process'
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'

export const CHDB_VERSION = '3.4.0'
/** The native package chdb@3.4.0 pins in its optionalDependencies. */
export const CHDB_LIB_VERSION = '26.7.3-stable.1'

const MARKER = '.burrow-chdb-installed'
const LOCK = '.burrow-chdb-install.lock'
const INSTALL_TIMEOUT_MS = 15 * 60_000

export function chdbDir(): string {
  return process.env.BURROW_CHDB_DIR || join(homedir(), '.cache', 'burrow', 'chdb')
}

let libPackage: string | undefined

/** `@chdb/lib-<platform>` for this machine, or an error naming what chdb does not ship. */
export function chdbLibPackage(): string {
  libPackage ??= detectLibPackage()
  return libPackage
}

function detectLibPackage(): string {
  const { platform, arch } = process
  if (platform === 'darwin' && (arch === 'arm64' || arch === 'x64')) return `@chdb/lib-darwin-${arch}`
  if (platform === 'linux' && (arch === 'arm64' || arch === 'x64')) {
    // process.report tells glibc from musl; chdb ships glibc builds only.
    const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)
      ?.header
    if (header && !header.glibcVersionRuntime) throw new Error('chdb has no build for musl libc')
    return `@chdb/lib-linux-${arch}-gnu`
  }
  throw new Error(`chdb has no build for ${platform}-${arch}`)
}

const markerText = () => `chdb@${CHDB_VERSION} ${chdbLibPackage()}@${CHDB_LIB_VERSION}\n`

function installed(dir: string): boolean {
  try {
    return (
      readFileSync(join(dir, MARKER), 'utf8') === markerText() &&
      existsSync(join(dir, 'node_modules', 'chdb', 'package.json'))
    )
  } catch {
    return false
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Takes the lock file, or returns false if a live process holds it (a dead holder's lock is removed). */
function tryLock(lock: string): boolean {
  try {
    const fd = openSync(lock, 'wx')
    writeFileSync(fd, `${process.pid}\n`)
    closeSync(fd)
    return true
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
  }
  let stale: boolean
  try {
    const pid = Number(readFileSync(lock, 'utf8').trim())
    const age = Date.now() - statSync(lock).mtimeMs
    stale = !pid || !pidAlive(pid) || age > INSTALL_TIMEOUT_MS
  } catch {
    stale = true // removed or half-written meanwhile: try again
  }
  if (stale) rmSync(lock, { force: true })
  return false
}

function run(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-8000)
    })
    child.on('error', reject)
    child.on('exit', (code, signal) =>
      code === 0
        ? resolve()
        : reject(new Error(`${cmd} ${args.join(' ')} failed (${signal ?? code}):\n${stderr}`)),
    )
  })
}

async function install(dir: string): Promise<void> {
  const lib = chdbLibPackage()
  const started = Date.now()
  process.stderr.write(
    `burrow: installing chdb@${CHDB_VERSION} + ${lib}@${CHDB_LIB_VERSION} (ClickHouse 26.x, ~550 MB) into ${dir}\n`,
  )
  // A package.json of its own keeps npm from walking up to an enclosing project.
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'burrow-chdb-cache', private: true, description: 'written by Burrow' }, null, 2),
  )
  rmSync(join(dir, MARKER), { force: true })
  await run('npm', [
    'install',
    '--prefix',
    dir,
    '--no-audit',
    '--no-fund',
    '--omit=peer',
    '--loglevel=error',
    `chdb@${CHDB_VERSION}`,
    `${lib}@${CHDB_LIB_VERSION}`,
  ])
  const pkg = JSON.parse(readFileSync(join(dir, 'node_modules', 'chdb', 'package.json'), 'utf8')) as {
    version: string
  }
  if (pkg.version !== CHDB_VERSION)
    throw new Error(`installed chdb is ${pkg.version}, wanted ${CHDB_VERSION}`)
  writeFileSync(join(dir, MARKER), markerText())
  if (process.env.BURROW_CHDB_VERBOSE) {
    process.stderr.write(`burrow: chdb installed in ${((Date.now() - started) / 1000).toFixed(1)} s\n`)
  }
}

/**
 * The directory holding node_modules/chdb (ClickHouse 26.x embedded), installing it on first use.
 * Directory: $BURROW_CHDB_DIR or ~/.cache/burrow/chdb.
 */
export async function ensureChdb(): Promise<string> {
  const dir = chdbDir()
  if (installed(dir)) return dir
  mkdirSync(dir, { recursive: true })
  const lock = join(dir, LOCK)
  const deadline = Date.now() + INSTALL_TIMEOUT_MS
  for (;;) {
    if (installed(dir)) return dir
    if (tryLock(lock)) {
      try {
        if (!installed(dir)) await install(dir)
        return dir
      } finally {
        rmSync(lock, { force: true })
      }
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for another chdb install (${lock})`)
    await new Promise((r) => setTimeout(r, 500))
  }
}

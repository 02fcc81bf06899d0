// Installs npm packages on demand into a cache directory outside the project's package.json: the
// ClickHouse library of a platform the lock file does not carry, and the test suite's second
// ClickHouse release. Safe to call from several processes at once: one installs under a lock
// file, the others wait for its marker.
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

const MARKER = '.burrow-installed'
const LOCK = '.burrow-install.lock'
const INSTALL_TIMEOUT_MS = 15 * 60_000

/** Burrow's cache of installed packages: $BURROW_CACHE_DIR, or ~/.cache/burrow. */
export function cacheRoot(): string {
  return process.env.BURROW_CACHE_DIR || join(homedir(), '.cache', 'burrow')
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
    stale = !pid || !pidAlive(pid) || Date.now() - statSync(lock).mtimeMs > INSTALL_TIMEOUT_MS
  } catch {
    stale = true // removed or half-written meanwhile: try again
  }
  if (stale) rmSync(lock, { force: true })
  return false
}

function npmInstall(dir: string, specs: string[]): Promise<void> {
  // A package.json of its own keeps npm from walking up to an enclosing project.
  writeFileSync(join(dir, 'package.json'), '{ "name": "burrow-cache", "private": true }\n')
  const args = [
    'install',
    '--prefix',
    dir,
    '--no-audit',
    '--no-fund',
    '--omit=peer',
    '--loglevel=error',
    ...specs,
  ]
  return new Promise((resolve, reject) => {
    const child = spawn('npm', args, { stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-8000)
    })
    child.on('error', (err) =>
      reject(new Error(`cannot run npm to install ${specs.join(' ')}: ${err.message}`)),
    )
    child.on('exit', (code, signal) =>
      code === 0
        ? resolve()
        : reject(new Error(`npm install ${specs.join(' ')} failed (${signal ?? code}):\n${stderr}`)),
    )
  })
}

/**
 * The directory holding `node_modules/<package>` for every one of `specs` (`name@version`),
 * installing them with npm into `<cacheRoot()>/<name>` on first use. `onInstall` is told before an
 * install starts (it takes a while: the ClickHouse library is ~190 MB to download).
 */
export async function installCached(name: string, specs: string[], onInstall?: () => void): Promise<string> {
  const dir = join(cacheRoot(), name)
  const marker = join(dir, MARKER)
  const want = `${specs.join(' ')}\n`
  const installed = () => {
    try {
      return readFileSync(marker, 'utf8') === want
    } catch {
      return false
    }
  }
  if (installed()) return dir
  mkdirSync(dir, { recursive: true })
  const lock = join(dir, LOCK)
  const deadline = Date.now() + INSTALL_TIMEOUT_MS
  for (;;) {
    if (installed()) return dir
    if (tryLock(lock)) {
      try {
        if (!installed()) {
          onInstall?.()
          rmSync(marker, { force: true })
          await npmInstall(dir, specs)
          writeFileSync(marker, want)
        }
        return dir
      } finally {
        rmSync(lock, { force: true })
      }
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for another install into ${dir} (${lock})`)
    await new Promise((r) => setTimeout(r, 500))
  }
}

/** Whether `dir/node_modules/<pkg>/package.json` exists. */
export const hasPackage = (dir: string, pkg: string) =>
  existsSync(join(dir, 'node_modules', pkg, 'package.json'))

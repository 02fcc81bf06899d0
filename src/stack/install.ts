import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import type { Logger } from '../observability/logger.ts'

export const BINARIES = {
  'nats-server': { pkg: 'nats-server', paths: ['/usr/sbin/nats-server', '/usr/bin/nats-server'] },
  // only the SDK contract tests need it (posthog-js runs in headless Chromium)
  chromium: { pkg: 'chromium', paths: ['/usr/bin/chromium'] },
} as const

export type Binary = keyof typeof BINARIES

export class MissingDependencyError extends Error {
  override name = 'MissingDependencyError'
}

export function findBinary(name: Binary): string | undefined {
  const known = BINARIES[name].paths.find((p) => existsSync(p))
  if (known) return known
  const which = spawnSync('which', [name], { encoding: 'utf8' })
  return which.status === 0 ? which.stdout.trim() : undefined
}

function aptInstall(pkgs: string[], log: Logger): void {
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
  const install = () =>
    spawnSync('apt-get', ['install', '-y', '--no-install-recommends', ...pkgs], { env, stdio: 'pipe' })
  log.info({ packages: pkgs }, 'installing missing packages with apt-get')
  if (install().status === 0) return
  // A fresh machine often has no package lists yet.
  execFileSync('apt-get', ['update'], { env, stdio: 'pipe' })
  const second = install()
  if (second.status !== 0) {
    throw new MissingDependencyError(
      `apt-get install ${pkgs.join(' ')} failed: ${second.stderr.toString().slice(-500)}`,
    )
  }
}

/** Resolves each binary, installing the Debian packages that are missing when allowed and running as root. */
export function ensureBinaries(
  names: Binary[],
  opts: { autoInstall: boolean; log: Logger },
): Record<Binary, string> {
  const missing = names.filter((n) => !findBinary(n))
  if (missing.length > 0) {
    const pkgs = missing.map((n) => BINARIES[n].pkg)
    const isRoot = process.getuid?.() === 0
    if (!opts.autoInstall || !isRoot) {
      throw new MissingDependencyError(
        `${missing.join(' and ')} not installed. Install with: sudo apt-get install -y ${pkgs.join(' ')} ` +
          '(or point NATS_URL at a running server)',
      )
    }
    aptInstall(pkgs, opts.log)
  }
  const out = {} as Record<Binary, string>
  for (const n of names) {
    const p = findBinary(n)
    if (!p) throw new MissingDependencyError(`${n} still not found after installing ${BINARIES[n].pkg}`)
    out[n] = p
  }
  return out
}

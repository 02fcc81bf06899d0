import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import semver from 'semver'
import { describe, expect, it } from 'vitest'

// npm prints EBADENGINE for every installed package whose `engines.node` the running Node does
// not satisfy. Burrow promises Node 20 (package.json `engines`): what it runs on must accept the
// oldest Node 20, and everything installed (dev tools included) must accept the Node running here.

const root = join(import.meta.dirname, '..', '..')
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string } }
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { engines?: { node?: string } | string[]; dev?: boolean; optional?: boolean }>
}

function nodeRanges(filter: (entry: { dev?: boolean }) => boolean): [string, string][] {
  return Object.entries(lock.packages)
    .filter(([name, e]) => name !== '' && filter(e))
    .flatMap(([name, e]) => {
      const range = Array.isArray(e.engines) ? undefined : e.engines?.node
      return range ? [[name, range] as [string, string]] : []
    })
}

describe('Node engines', () => {
  it('promises Node 20', () => {
    expect(semver.minVersion(pkg.engines.node)?.major).toBe(20)
  })

  it('installs no runtime dependency that needs a newer Node than the oldest it promises', () => {
    const oldest = semver.minVersion(pkg.engines.node)!.version
    const refused = nodeRanges((e) => !e.dev).filter(([, range]) => !semver.satisfies(oldest, range))
    expect(refused).toEqual([])
  })

  it('installs nothing, dev tools included, that refuses the Node running the tests', () => {
    const refused = nodeRanges(() => true).filter(
      ([name, range]) =>
        !semver.satisfies(process.version, range) &&
        // platform binaries of other systems are never installed here
        !/\/(@rolldown|@esbuild|@napi-rs)\/|binding-/.test(name),
    )
    expect(refused).toEqual([])
  })
})

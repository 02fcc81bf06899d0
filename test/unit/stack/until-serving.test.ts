// A started server that exits is not waited for (src/stack/process.ts untilServing): before, its
// start waited out the whole timeout (60 s for clickhouse-server) whatever had happened.
import { spawn } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { untilServing } from '../../../src/stack/process.ts'

const node = (code: string) => spawn(process.execPath, ['-e', code], { stdio: 'ignore' })

describe('untilServing', () => {
  it('rejects with the exit code as soon as the process exits', async () => {
    const child = node('setTimeout(() => process.exit(70), 200)')
    const started = Date.now()
    await expect(untilServing(child, async () => false, 20_000)).rejects.toThrow('exited with 70')
    expect(Date.now() - started).toBeLessThan(10_000)
  })

  it('rejects for a process that had exited before the wait began', async () => {
    const child = node('process.exit(3)')
    await new Promise((r) => child.once('exit', r))
    await expect(untilServing(child, async () => false, 20_000)).rejects.toThrow('exited with 3')
  })

  it('resolves once the server answers, a throwing check counting as not yet', async () => {
    const child = node('setTimeout(() => {}, 5000)')
    let calls = 0
    await untilServing(
      child,
      async () => {
        calls++
        if (calls < 3) throw new Error('connection refused')
        return true
      },
      20_000,
    )
    expect(calls).toBe(3)
    child.kill()
  })

  it('times out while the server neither answers nor exits', async () => {
    const child = node('setTimeout(() => {}, 5000)')
    await expect(untilServing(child, async () => false, 300)).rejects.toThrow('timed out after 300 ms')
    child.kill()
  })

  it('of several processes, rejects naming the first that exits, while the others run on', async () => {
    const children = [
      { name: 'api', child: node('setTimeout(() => {}, 5000)') },
      { name: 'projector1', child: node('setTimeout(() => process.exit(1), 200)') },
    ]
    const started = Date.now()
    await expect(untilServing(children, async () => false, 20_000)).rejects.toThrow(
      'projector1 exited with 1',
    )
    expect(Date.now() - started).toBeLessThan(10_000)
    expect(children[0]!.child.exitCode).toBeNull()
    children[0]!.child.kill()
  })

  it('of several processes, resolves once all of them answer', async () => {
    const children = ['a', 'b'].map((name) => ({ name, child: node('setTimeout(() => {}, 5000)') }))
    let calls = 0
    await untilServing(children, async () => ++calls >= 2, 20_000)
    expect(calls).toBe(2)
    for (const c of children) c.child.kill()
  })
})

import { Worker } from 'node:worker_threads'
import { describe, expect, it } from 'vitest'
import { currentThreadId, statCpuMs, threadCpuMs } from '../../../src/runtime/thread-cpu.ts'

describe('statCpuMs', () => {
  it('reads utime + stime in ticks of 10 ms after the name, whatever the name holds', () => {
    // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime ...
    const line = '4242 (a) b (c)) S 1 2 3 0 -1 4194304 120 0 0 0 37 5 0 0 20 0 1 0 172641'
    expect(statCpuMs(line)).toBe(420)
    expect(statCpuMs('1 (x) R 0 0 0 0 0 0 0 0 0 0 0 0')).toBe(0)
    expect(statCpuMs('garbage')).toBeUndefined()
  })
})

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe.runIf(process.platform === 'linux')('threadCpuMs', () => {
  it("reads another thread's CPU time, which grows while it works, and not a waiting thread's", async () => {
    expect(currentThreadId()).toBe(process.pid) // the main thread's id is the process id
    // a worker that tells its thread id, then spins until told to stop
    const stop = new Int32Array(new SharedArrayBuffer(4))
    const worker = new Worker(
      `const { parentPort, workerData } = require('node:worker_threads')
       parentPort.postMessage(Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop()))
       while (Atomics.load(workerData, 0) === 0);`,
      { eval: true, workerData: stop },
    )
    try {
      const tid = await new Promise<number>((resolve) => worker.once('message', resolve))
      expect(tid).not.toBe(process.pid)
      const start = threadCpuMs(tid)!
      const mainStart = threadCpuMs(process.pid)!
      // this thread sleeps meanwhile: what grows is the worker's time
      let used = 0
      for (let i = 0; i < 600 && used < 100; i++) {
        await sleep(50)
        used = threadCpuMs(tid)! - start
      }
      expect(used).toBeGreaterThanOrEqual(100)
      expect(threadCpuMs(process.pid)! - mainStart).toBeLessThan(used)
    } finally {
      Atomics.store(stop, 0, 1)
      await worker.terminate()
    }
  })

  it('is undefined for a thread that is not there', () => {
    expect(threadCpuMs(2 ** 30)).toBeUndefined()
  })
})

import { Worker } from 'node:worker_threads'

// Measures what every other project sees while one project's hostile requests run (issue 40): every
// 50 ms, `/_health` and a one-event capture of another project, each timed. A stall is the longest
// of those answers; the bound asserted is no more than 100 ms at p99 and 300 ms at most.

export interface Probe {
  health: number[]
  capture: number[]
}

export interface StallFigures {
  samples: number
  p50: number
  p99: number
  max: number
}

const PERIOD_MS = 50
/**
 * How long each row (and the idle baseline) is probed at least: ~120 samples, so the p99 is not the
 * single slowest one (a core taken by another test lane now and then).
 */
export const PROBE_MS = 3000

export function figures(xs: number[]): StallFigures {
  const sorted = [...xs].sort((a, b) => a - b)
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0
  return {
    samples: xs.length,
    p50: Math.round(at(50)),
    p99: Math.round(at(99)),
    max: Math.round(sorted[sorted.length - 1] ?? 0),
  }
}

/**
 * Runs `work` while probing `base` every 50 ms (at least `minMs`) from a worker thread of its own
 * (prober-worker.mjs), and returns its result with the probes' latencies. `token` is the other
 * project's API key, whose capture is probed.
 */
export async function probeDuring<T>(
  base: string,
  token: string,
  work: () => Promise<T>,
  minMs = PROBE_MS,
): Promise<{ result: T; probe: Probe }> {
  const worker = new Worker(new URL('./prober-worker.mjs', import.meta.url), {
    workerData: { base, token, periodMs: PERIOD_MS },
  })
  const answer = new Promise<Probe & { failure: string | null }>((resolve, reject) => {
    worker.once('message', resolve)
    worker.once('error', reject)
  })
  const started = performance.now()
  try {
    const result = await work()
    const left = minMs - (performance.now() - started)
    if (left > 0) await new Promise((r) => setTimeout(r, left))
    worker.postMessage('stop')
    const { health, capture, failure } = await answer
    if (failure) throw new Error(`a probe failed: ${failure}`)
    return { result, probe: { health, capture } }
  } finally {
    await worker.terminate()
  }
}

/** The worst of both probes, for the report line and the bound. */
export function stall(probe: Probe): StallFigures {
  return figures([...probe.health, ...probe.capture])
}

/** BURROW_ABUSE_MEASURE_ONLY=1 prints the figures without asserting the bound (measuring old code). */
export const measureOnly = process.env.BURROW_ABUSE_MEASURE_ONLY === '1'

export const STALL_P99_MS = 100
export const STALL_MAX_MS = 300

// Runs in a worker thread (regex.ts's pool): compiles and matches project regexes away from the
// event loop. Its compiled programs are cached by their size in bytes; the worker runs with heap
// limits, so however many patterns a project writes, this thread is what runs out, not the process.
import { parentPort } from 'node:worker_threads'
import { LRUCache } from 'lru-cache'
import { currentThreadId } from '../runtime/thread-cpu.ts'
import { compileProgram, type Program, programFinds } from './program.ts'

/** A batch: the patterns, then each match as [pattern index, text]. */
export interface RegexJob {
  id: number
  patterns: string[]
  matches: [number, string][]
}

/** Per pattern its instruction count or why it cannot be used; per match its answer or why not. */
export interface RegexAnswer {
  id: number
  ok: { programs: (number | string)[]; found: (boolean | string)[] }
}

/** Bytes of compiled programs this worker keeps. */
export const WORKER_CACHE_BYTES = 48 * 1024 * 1024

const port = parentPort
if (!port) throw new Error('regex-worker.ts runs only as a worker thread')

const programs = new LRUCache<string, Program>({
  maxSize: WORKER_CACHE_BYTES,
  sizeCalculation: (p) => p.bytes,
})
const refused = new LRUCache<string, string>({ max: 10_000 })

function program(pattern: string): Program | string {
  const hit = programs.get(pattern) ?? refused.get(pattern)
  if (hit !== undefined) return hit
  try {
    const p = compileProgram(pattern)
    programs.set(pattern, p)
    return p
  } catch (err) {
    const why = (err as Error).message
    refused.set(pattern, why)
    return why
  }
}

port.on('message', (job: RegexJob) => {
  const compiled = job.patterns.map(program)
  const found = job.matches.map(([i, text]) => {
    const p = compiled[i]!
    if (typeof p === 'string') return p
    try {
      return programFinds(p, text)
    } catch (err) {
      return (err as Error).message
    }
  })
  const answer: RegexAnswer = {
    id: job.id,
    ok: { programs: compiled.map((p) => (typeof p === 'string' ? p : p.instructions)), found },
  }
  port.postMessage(answer)
})

port.postMessage({ ready: true, tid: currentThreadId() })

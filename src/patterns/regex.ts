import { LRUCache } from 'lru-cache'
import { WorkerPool, workerModuleUrl } from '../runtime/worker-pool.ts'
import {
  compileProgram,
  InvalidRegex,
  MAX_MATCH_COST,
  MAX_PATTERN_CHARS,
  MAX_PROGRAM_INSTRUCTIONS,
  MAX_REGEX_INPUT_CHARS,
  matchProblem,
  type Program,
  programFinds,
} from './program.ts'
import type { RegexAnswer, RegexJob } from './regex-worker.ts'

/*
 * A project's regex: the one API for every regular expression a project writes (flag and survey
 * targeting conditions, action URL regexes, cohort regex filters, ...) and later runs against
 * values a client sends. Patterns run on RE2 (re2js: linear time whatever the pattern, no
 * lookaround or backreferences; PostHog's flags service uses Rust's RE2-class `regex` crate), and
 * nothing about them can stall the event loop or end the process:
 *
 *   At write (a 400 naming the field when refused):
 *     const problem = await checkRegex(pattern, projectId)   // null, or why it is refused
 *       compiled in a regex worker; refused when RE2 cannot compile it, when it is longer than
 *       MAX_PATTERN_CHARS or compiles to more than MAX_PROGRAM_INSTRUCTIONS.
 *     regexProblem(pattern)   // sync and cheap: the length bound, and a full check of small
 *                             // patterns only; a write path must still await checkRegex
 *
 *   At evaluation (one call per request, every pattern × value it needs):
 *     const answers = await matchRegexes(projectId, [{ pattern, text }, ...])
 *     answers.finds(pattern, text)   // boolean, or throws InvalidRegex (bad pattern, value over
 *                                    // MAX_REGEX_INPUT_CHARS, program × value over MAX_MATCH_COST,
 *                                    // or the match ran out of time)
 *       Cheap matches (small programs seen before, short values) run inline; the rest go to the
 *       regex workers, where projects take turns, one batch of a project at a time, each batch
 *       within REGEX_BUDGET_MS of CPU (past it the worker is replaced and those matches fail; a
 *       single match costs at most MAX_MATCH_COST, ~70 ms, so only a batch of many reaches it).
 *
 *   Kept for callers that hold a pattern known to be small (runs on the calling thread):
 *     compileRegex(pattern), regexFinds(pattern, text), InvalidRegex, MAX_REGEX_INPUT_CHARS
 *
 * Compiled programs are cached by their size in bytes, never by count: INLINE_CACHE_BYTES here,
 * WORKER_CACHE_BYTES in each worker, whose heap is limited (REGEX_WORKER_HEAP_MB) so that a flood of
 * big patterns ends a worker (replaced at once), never the process.
 */

export { InvalidRegex, MAX_MATCH_COST, MAX_PATTERN_CHARS, MAX_PROGRAM_INSTRUCTIONS, MAX_REGEX_INPUT_CHARS }
/** Programs up to this many instructions are matched on the calling thread when the value is short. */
const INLINE_MAX_INSTRUCTIONS = 256
/** Inline matches cost at most this (instructions × characters; ~1 ms). */
const INLINE_MAX_COST = 100_000
const INLINE_CACHE_BYTES = 8 * 1024 * 1024
/** CPU time of one batch in a regex worker. */
export const REGEX_BUDGET_MS = 1000
const REGEX_WORKERS = 2
/** Batches of one project waiting for a worker; past it that request's matches fail at once. */
const PER_PROJECT_QUEUED = 8
const REGEX_WORKER_HEAP_MB = 256

const programs = new LRUCache<string, Program>({
  maxSize: INLINE_CACHE_BYTES,
  sizeCalculation: (p) => p.bytes,
})
/** What the workers found out about each pattern: its instruction count, or why it is refused. */
const known = new LRUCache<string, number | string>({ max: 50_000 })

let pool: WorkerPool<RegexAnswer> | undefined
function workers(): WorkerPool<RegexAnswer> {
  pool ??= new WorkerPool<RegexAnswer>({
    url: workerModuleUrl(new URL('./regex-worker.ts', import.meta.url)),
    size: REGEX_WORKERS,
    budgetMs: REGEX_BUDGET_MS,
    fairness: { perKeyRunning: 1, perKeyQueued: PER_PROJECT_QUEUED },
    resourceLimits: { maxOldGenerationSizeMb: REGEX_WORKER_HEAP_MB, maxYoungGenerationSizeMb: 32 },
    rebuild: () => new InvalidRegex('the regex could not be matched'),
    overBudget: (ms) => new InvalidRegex(`the regexes could not be matched within ${ms} ms`),
    queueFull: () => new InvalidRegex('too many regex matches of this project are waiting'),
  })
  return pool
}

/** Stops the regex workers (tests, shutdown); the next match starts new ones. */
export async function closeRegexWorkers(): Promise<void> {
  const p = pool
  pool = undefined
  await p?.close()
}

/** A small program compiled here, or undefined when it is not known to be small. */
function inlineProgram(pattern: string): Program | undefined {
  const hit = programs.get(pattern)
  if (hit) return hit
  const size = known.get(pattern)
  if (typeof size !== 'number' || size > INLINE_MAX_INSTRUCTIONS) return undefined
  const p = compileProgram(pattern)
  programs.set(pattern, p)
  return p
}

/** A pattern short and plain enough to compile here in microseconds (no counted repetition). */
const isSimple = (pattern: string) => pattern.length <= 256 && !pattern.includes('{')

/** The compiled pattern (cached); throws InvalidRegex when RE2 refuses it or it is over the bounds. Runs here. */
export function compileRegex(pattern: string): Program['re'] {
  let p = programs.get(pattern)
  if (!p) {
    p = compileProgram(pattern)
    known.set(pattern, p.instructions)
    programs.set(pattern, p)
  }
  return p.re
}

/** Whether `pattern` matches anywhere in `text` (RegExp.test semantics), on the calling thread. */
export function regexFinds(pattern: string, text: string): boolean {
  compileRegex(pattern)
  return programFinds(programs.get(pattern)!, text)
}

/** The cheap part of the write-time check, synchronous; null does not promise that checkRegex accepts it. */
export function regexProblem(pattern: string): string | null {
  if (pattern.length > MAX_PATTERN_CHARS) return `regex is longer than ${MAX_PATTERN_CHARS} characters`
  const size = known.get(pattern)
  if (typeof size === 'string') return size
  if (size !== undefined || !isSimple(pattern)) return null
  try {
    compileRegex(pattern)
    return null
  } catch (err) {
    return (err as Error).message
  }
}

/** Why `pattern` cannot be written, or null: compiled off the event loop, under the size bounds. */
export async function checkRegex(pattern: string, projectId = 0): Promise<string | null> {
  const cheap = regexProblem(pattern)
  if (cheap !== null) return cheap
  if (typeof known.get(pattern) === 'number') return null
  try {
    const {
      programs: [size],
    } = await runInWorker(projectId, [pattern], [])
    return typeof size === 'string' ? size : null
  } catch (err) {
    return (err as Error).message
  }
}

/** One match a request needs. */
export interface RegexMatch {
  pattern: string
  text: string
}

/** The answers of one matchRegexes call. */
export class RegexAnswers {
  constructor(private readonly answers: Map<string, boolean | string>) {}

  /** Whether `pattern` finds a match in `text`; throws InvalidRegex when it could not be answered. */
  finds(pattern: string, text: string): boolean {
    const a = this.answers.get(matchKey(pattern, text))
    // not asked for: answered here only when that is cheap, never compiled here otherwise
    const b = a ?? answerHere({ pattern, text }) ?? 'the regex was not prepared for this value'
    if (typeof b === 'string') throw new InvalidRegex(b)
    return b
  }
}

const matchKey = (pattern: string, text: string) => `${pattern}\u0000${text}`

/** Answers every match one request of `projectId` needs (see the top of this file). */
export async function matchRegexes(projectId: number, matches: RegexMatch[]): Promise<RegexAnswers> {
  const answers = new Map<string, boolean | string>()
  const later: RegexMatch[] = []
  for (const m of matches) {
    const key = matchKey(m.pattern, m.text)
    if (answers.has(key)) continue
    const answer = answerHere(m)
    if (answer === undefined) {
      answers.set(key, false) // a placeholder: each match is sent once
      later.push(m)
    } else answers.set(key, answer)
  }
  if (later.length > 0) {
    const patterns = [...new Set(later.map((m) => m.pattern))]
    const index = new Map(patterns.map((p, i) => [p, i]))
    try {
      const out = await runInWorker(
        projectId,
        patterns,
        later.map((m) => [index.get(m.pattern)!, m.text]),
      )
      later.forEach((m, i) => answers.set(matchKey(m.pattern, m.text), out.found[i]!))
    } catch (err) {
      for (const m of later) answers.set(matchKey(m.pattern, m.text), (err as Error).message)
    }
  }
  return new RegexAnswers(answers)
}

/** The answer when it is cheap to give here; undefined when the match goes to a worker. */
function answerHere({ pattern, text }: RegexMatch): boolean | string | undefined {
  if (pattern.length > MAX_PATTERN_CHARS) return `regex is longer than ${MAX_PATTERN_CHARS} characters`
  const size = known.get(pattern)
  if (typeof size === 'string') return size
  // the length bound needs no program; the cost bound needs its size, told by a worker
  const problem = matchProblem(size ?? 0, text.length)
  if (problem !== null) return problem
  if (size === undefined) return undefined
  if (size > INLINE_MAX_INSTRUCTIONS || size * text.length > INLINE_MAX_COST) return undefined
  try {
    return programFinds(inlineProgram(pattern)!, text)
  } catch (err) {
    return (err as Error).message
  }
}

async function runInWorker(
  projectId: number,
  patterns: string[],
  matches: [number, string][],
): Promise<RegexAnswer['ok']> {
  const job: Omit<RegexJob, 'id'> = { patterns, matches }
  const out = await workers().run<RegexAnswer['ok']>(projectId, job)
  patterns.forEach((p, i) => known.set(p, out.programs[i]!))
  return out
}

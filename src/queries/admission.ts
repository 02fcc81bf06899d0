import { AppError } from '../http/errors.ts'

// How many queries may run at once in this api process: in all, per project and per personal API
// key. Each running query holds a slot until ClickHouse is done with it (background ones too), so
// one key cannot fill ClickHouse for everyone; with QUERY_MAX_MEMORY_BYTES per query this bounds
// the memory one process's queries can take. Counted per process, like the rate limit.

export interface AdmissionLimits {
  total: number
  perProject: number
  perKey: number
}

/** Too many queries running: PostHog answers this with 429 as well. */
export class TooManyQueries extends AppError {
  constructor(scope: string, limit: number) {
    super(
      429,
      'throttled_error',
      'concurrency_limit',
      `Too many queries are running ${scope} (at most ${limit} at once); retry when one has finished.`,
      null,
      { 'retry-after': '1' },
    )
  }
}

/** The admission limits the configuration sets (QUERY_MAX_CONCURRENT*). */
export function admissionLimits(c: {
  QUERY_MAX_CONCURRENT: number
  QUERY_MAX_CONCURRENT_PER_PROJECT: number
  QUERY_MAX_CONCURRENT_PER_KEY: number
}): AdmissionLimits {
  return {
    total: c.QUERY_MAX_CONCURRENT,
    perProject: c.QUERY_MAX_CONCURRENT_PER_PROJECT,
    perKey: c.QUERY_MAX_CONCURRENT_PER_KEY,
  }
}

const shared = new WeakMap<object, QueryAdmission>()

export class QueryAdmission {
  /**
   * The one admission of a process (keyed by its runtime): HogQL and insight queries, recordings
   * reads, every read a user starts, share the same caps.
   */
  static of(owner: object, limits: AdmissionLimits): QueryAdmission {
    let a = shared.get(owner)
    if (!a) shared.set(owner, (a = new QueryAdmission(limits)))
    return a
  }

  private total = 0
  private readonly byProject = new Map<number, number>()
  private readonly byKey = new Map<string, number>()

  constructor(private readonly limits: AdmissionLimits) {}

  /** Takes a slot for a query of `projectId` run with key `keyId`; call the result once to give it back. */
  admit(projectId: number, keyId: string): () => void {
    if (this.total >= this.limits.total) throw new TooManyQueries('on this server', this.limits.total)
    if ((this.byProject.get(projectId) ?? 0) >= this.limits.perProject) {
      throw new TooManyQueries('in this project', this.limits.perProject)
    }
    if ((this.byKey.get(keyId) ?? 0) >= this.limits.perKey) {
      throw new TooManyQueries('with this personal API key', this.limits.perKey)
    }
    this.total++
    bump(this.byProject, projectId, 1)
    bump(this.byKey, keyId, 1)
    let released = false
    return () => {
      if (released) return
      released = true
      this.total--
      bump(this.byProject, projectId, -1)
      bump(this.byKey, keyId, -1)
    }
  }

  /** Queries running now (for tests and metrics). */
  get running(): number {
    return this.total
  }
}

function bump<K>(m: Map<K, number>, k: K, by: number): void {
  const n = (m.get(k) ?? 0) + by
  if (n <= 0) m.delete(k)
  else m.set(k, n)
}

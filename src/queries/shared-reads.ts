// Reads that must start after their caller arrived (a read of the data's state that a computation
// then relies on), shared by the callers that arrive together: per key, a caller with no read under
// way starts one at once; callers arriving while one runs share the next, which starts when it
// ends and covers what each of them asked for. A lone caller never waits for company, and a burst
// of callers (a dashboard's requests) costs two reads, not one each.

/** What a read covers: widened by each caller that joins a read not yet started. */
export interface ReadScope<S> {
  merge(a: S, b: S): S
}

interface Pending<S, R> {
  scope: S
  result: Promise<R>
}

export class SharedReads<K, S, R> {
  private readonly reads = new Map<K, { done: Promise<void>; next?: Pending<S, R> }>()

  constructor(
    private readonly read: (key: K, scope: S) => Promise<R>,
    private readonly scopes: ReadScope<S>,
  ) {}

  /** The result of a read of `key` over (at least) `scope` that starts after this call. */
  get(key: K, scope: S): Promise<R> {
    const current = this.reads.get(key)
    if (!current) return this.begin(key, scope)
    if (current.next) {
      current.next.scope = this.scopes.merge(current.next.scope, scope)
      return current.next.result
    }
    const next: Pending<S, R> = { scope, result: Promise.resolve(undefined as R) }
    next.result = current.done.then(() => this.begin(key, next.scope))
    current.next = next
    return next.result
  }

  /** Starts a read now; when it ends, the key's entry goes (or gives way to the next read's). */
  private begin(key: K, scope: S): Promise<R> {
    const result = this.read(key, scope)
    const entry: { done: Promise<void>; next?: Pending<S, R> } = {
      done: result.then(
        () => undefined,
        () => undefined,
      ),
    }
    // registered before any next read's start, so it runs first; that start then sets its own entry
    void entry.done.then(() => {
      if (this.reads.get(key) === entry && !entry.next) this.reads.delete(key)
    })
    this.reads.set(key, entry)
    return result
  }
}

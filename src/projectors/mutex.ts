/** Serializes async sections: the lanes of one process share the identity state and take turns. */
export class Mutex {
  private tail: Promise<void> = Promise.resolve()
  private waiters = 0

  /** Whether a section is waiting for the one running now (so the running one should be brief). */
  get contended(): boolean {
    return this.waiters > 0
  }

  /** Runs `fn` once every section started before it has finished; sections run one at a time. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    const prev = this.tail
    let release!: () => void
    this.tail = new Promise<void>((r) => {
      release = r
    })
    this.waiters++
    try {
      await prev
    } finally {
      this.waiters--
    }
    try {
      return await fn()
    } finally {
      release()
    }
  }
}

/** Serializes async sections: the lanes of one process share the identity state and take turns. */
export class Mutex {
  private tail: Promise<void> = Promise.resolve()

  async run<T>(fn: () => Promise<T>): Promise<T> {
    const prev = this.tail
    let release!: () => void
    this.tail = new Promise<void>((r) => {
      release = r
    })
    await prev
    try {
      return await fn()
    } finally {
      release()
    }
  }
}

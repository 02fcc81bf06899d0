// What a test file opened through the harness (clients, connections, in-process Burrows), closed
// after that file's tests by per-file.ts. A module of its own so that the list outlives no file:
// with isolation off, the harness module is loaded once per worker, but per-file.ts runs for every
// file and empties the list in that file's afterAll.

/** Closers registered by the current test file, run in reverse order after its tests. */
export const closers: (() => Promise<unknown>)[] = []

/** Runs and forgets every registered closer, last first; a closer's failure does not stop the rest. */
export async function closeAll(): Promise<void> {
  for (const c of closers.splice(0).reverse()) await c().catch(() => undefined)
}

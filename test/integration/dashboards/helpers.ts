// What the dashboards, taxonomy and console-dashboards tests share.

/** Reads until `ok` holds or `ms` pass; returns the last value read (the caller asserts on it). */
export async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const v = await read()
    if (ok(v) || Date.now() > deadline) return v
    await new Promise((r) => setTimeout(r, 200))
  }
}

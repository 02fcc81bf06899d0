// The progress line of `burrow import` on stderr: a bar, bytes, lines, events/s and the ETA when the
// input's size is known (a file), lines and events/s only when it is not (stdin). On a terminal the
// line is redrawn in place a few times a second; otherwise a line is printed every few seconds.

export interface ProgressState {
  offset: number
  /** input size in bytes, when known */
  size: number | undefined
  lines: number
  events: number
  rejected: number
  /** offset the run started at (a resumed run measures its speed from there) */
  startOffset: number
  startEvents: number
  startedAt: number
}

const units = ['B', 'KB', 'MB', 'GB', 'TB']
export function formatBytes(n: number): string {
  let v = n
  let u = 0
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024
    u++
  }
  return `${v.toFixed(u === 0 ? 0 : 1)} ${units[u]}`
}

export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds))
  if (s < 60) return `${s}s`
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`
}

export function progressLine(p: ProgressState, now = Date.now(), width = 24): string {
  const secs = Math.max((now - p.startedAt) / 1000, 1e-3)
  const rate = Math.round((p.events - p.startEvents) / secs)
  const parts: string[] = []
  if (p.size !== undefined && p.size > 0) {
    const frac = Math.min(1, p.offset / p.size)
    const filled = Math.round(frac * width)
    parts.push(`[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(frac * 100).toFixed(1)}%`)
    parts.push(`${formatBytes(p.offset)}/${formatBytes(p.size)}`)
  }
  parts.push(`${p.lines.toLocaleString('en-US')} lines`)
  parts.push(`${p.events.toLocaleString('en-US')} events`)
  parts.push(`${rate.toLocaleString('en-US')} events/s`)
  if (p.rejected > 0) parts.push(`${p.rejected.toLocaleString('en-US')} rejected`)
  if (p.size !== undefined && p.size > 0) {
    const bytesPerSec = (p.offset - p.startOffset) / secs
    parts.push(`ETA ${bytesPerSec > 0 ? formatDuration((p.size - p.offset) / bytesPerSec) : '?'}`)
  }
  return `import ${parts.join('  ')}`
}

/** Renders to a stream; `update` is cheap to call per batch, `done` prints the final state. */
export function progressPrinter(out: NodeJS.WriteStream, opts: { intervalMs?: number } = {}) {
  const tty = out.isTTY === true
  const interval = opts.intervalMs ?? (tty ? 200 : 5000)
  // Off a terminal the first line waits a full interval: a short import prints its final line only.
  let last = tty ? 0 : Date.now()
  return {
    update(p: ProgressState): void {
      const now = Date.now()
      if (now - last < interval) return
      last = now
      out.write(tty ? `\r${progressLine(p, now)}\x1b[K` : `${progressLine(p, now)}\n`)
    },
    done(p: ProgressState): void {
      const line = progressLine(p)
      out.write(tty ? `\r${line}\x1b[K\n` : `${line}\n`)
    },
  }
}

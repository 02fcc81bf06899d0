import { type ChildProcess, spawn } from 'node:child_process'
import { openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'

export interface ManagedProcess {
  name: string
  pid: number
  stop(): Promise<void>
  /** Stops it without waiting for a clean exit, as a crash would. */
  kill(): void
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** A server left running by a Burrow that was killed outright would hold the data dir's lock. */
export async function stopStale(pidFile: string, expectCmd: string): Promise<void> {
  let pid: number
  try {
    pid = Number.parseInt(readFileSync(pidFile, 'utf8'), 10)
  } catch {
    return
  }
  if (!Number.isFinite(pid) || !alive(pid)) return
  let cmdline = ''
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
  } catch {}
  if (!cmdline.includes(expectCmd)) return
  process.kill(pid, 'SIGTERM')
  await waitFor(() => !alive(pid), 15_000, 50).catch(() => process.kill(pid, 'SIGKILL'))
}

export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 100) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      if (await check()) return
    } catch {}
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms`)
    await new Promise((r) => setTimeout(r, everyMs))
  }
}

/**
 * Waits until `answers()` says the started server (or every one of several) serves (a throwing
 * check counts as not yet), for at most `timeoutMs`. Rejects as soon as one of the processes exits,
 * naming it and its exit code: a server that failed to start (clickhouse-server exits 70 when its
 * port is in use) is not waited for.
 */
export async function untilServing(
  children: ChildProcess | readonly { name: string; child: ChildProcess }[],
  answers: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const watched = Array.isArray(children) ? children : [{ name: '', child: children as ChildProcess }]
  let exited: { name: string; code: number } | undefined
  const onExit = watched.map(({ name, child }) => {
    const seen = (code: number | null) => {
      exited ??= { name, code: code ?? -1 }
    }
    if (child.exitCode !== null || child.signalCode !== null) seen(child.exitCode)
    child.once('exit', seen)
    return () => child.off('exit', seen)
  })
  try {
    await waitFor(async () => exited !== undefined || (await answers()), timeoutMs)
  } finally {
    for (const off of onExit) off()
  }
  if (exited) throw new Error(`${exited.name ? `${exited.name} ` : ''}exited with ${exited.code}`)
}

export function startProcess(opts: {
  name: string
  bin: string
  args: string[]
  logFile: string
  pidFile: string
  cwd?: string
  /** added to this process's environment */
  env?: Record<string, string>
}): ManagedProcess & { child: ChildProcess } {
  const out = openSync(opts.logFile, 'a')
  const child = spawn(opts.bin, opts.args, {
    stdio: ['ignore', out, out],
    cwd: opts.cwd,
    env: opts.env ? { ...process.env, ...opts.env } : undefined,
  })
  if (child.pid === undefined) throw new Error(`could not start ${opts.name}`)
  const pid = child.pid
  writeFileSync(opts.pidFile, String(pid))
  let exited = false
  const exit = new Promise<void>((resolve) =>
    child.once('exit', () => {
      exited = true
      resolve()
    }),
  )
  return {
    name: opts.name,
    pid,
    child,
    kill() {
      if (!exited) child.kill('SIGKILL')
    },
    async stop() {
      if (!exited) {
        child.kill('SIGTERM')
        const timer = setTimeout(() => child.kill('SIGKILL'), 20_000)
        await exit
        clearTimeout(timer)
      }
      rmSync(opts.pidFile, { force: true })
    },
  }
}

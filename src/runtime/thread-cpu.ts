// The CPU time of one thread of this process, from Linux's /proc. A time budget measured on the wall
// clock refuses honest work on a busy machine (a thread waiting for a core spends no CPU); measured in
// the thread's own CPU time it charges only what the work itself cost.
import { readFileSync, readlinkSync } from 'node:fs'

// /proc/<pid>/task/<tid>/stat counts in clock ticks of USER_HZ, which is 100 on every Linux ABI.
const MS_PER_TICK = 10

/** The calling thread's kernel thread id on Linux (`/proc/thread-self`); undefined elsewhere. */
export function currentThreadId(): number | undefined {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop())
    return Number.isInteger(tid) && tid > 0 ? tid : undefined
  } catch {
    return undefined
  }
}

/**
 * User plus system CPU time in ms, at 10 ms resolution, that thread `tid` of this process has used;
 * undefined when it cannot be read (not Linux, or the thread has ended).
 */
export function threadCpuMs(tid: number): number | undefined {
  try {
    return statCpuMs(readFileSync(`/proc/self/task/${tid}/stat`, 'latin1'))
  } catch {
    return undefined
  }
}

/**
 * utime + stime in ms of a `/proc/.../stat` line, a process's or a thread's. The name field may hold
 * spaces and parentheses.
 */
export function statCpuMs(stat: string): number | undefined {
  // the fields after the name's closing parenthesis: state is the first, utime the 12th, stime the 13th
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  const ticks = Number(fields[11]) + Number(fields[12])
  return Number.isFinite(ticks) ? ticks * MS_PER_TICK : undefined
}

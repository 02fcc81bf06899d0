import { DROPS, drop, ok, type StepResult } from './results.ts'

/**
 * Passes a message above its source's watermark; drops one at or below it: its batch was committed
 * completely before (redelivered after a crash between commit and ack), so it is acked without work.
 */
export function skipCommitted<T extends { seq: number }>(msg: T, watermark: number): StepResult<T> {
  return msg.seq <= watermark ? drop(DROPS.committed) : ok(msg)
}

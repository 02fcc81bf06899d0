// What one pipeline step decided about one item, as a value (the model: PostHog's
// nodejs/src/ingestion/pipelines/results.ts). The batch runner (../prepare.ts) is the one place that
// turns these into counters and dead letters.

/** Carry on with `value`. */
export interface Ok<T> {
  type: 'ok'
  value: T
}

/** Stop here, deliberately and without an error (filtered, already done, dropped by a rule). */
export interface Drop {
  type: 'drop'
  /** a stable code, e.g. `already_written`; the runner counts by it */
  reason: string
}

/** Stop here and send the item to the dead-letter stream with `reason`. */
export interface Dlq {
  type: 'dlq'
  reason: string
}

/** The result of a step: ok with a value, drop, or dead-letter. */
export type StepResult<T> = Ok<T> | Drop | Dlq

/** An ok result carrying `value`. */
export const ok = <T>(value: T): Ok<T> => ({ type: 'ok', value })

/** A drop result with its reason code. */
export const drop = (reason: string): Drop => ({ type: 'drop', reason })

/** A dead-letter result with its reason (it travels in the dead letter's header). */
export const dlq = (reason: string): Dlq => ({ type: 'dlq', reason })

/** The stable drop codes the runner counts. */
export const DROPS = {
  /** a project this projector does not handle (`teams`); acknowledged untouched */
  otherTeam: 'other_team',
  /** the message is at or below its source's watermark: committed before */
  committed: 'already_committed',
  /** a plugin returned null */
  plugin: 'plugin_dropped',
  /** the event's row is already in ClickHouse (a redelivered batch) */
  written: 'already_written',
} as const

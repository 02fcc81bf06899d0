// Where a lane consumer cuts its next batch, and how many delivered messages it may hold unacked:
// the two bounds on a projector process's memory while it lags. A chunk of capture holds up to a
// thousand events, so a batch of PROJECTOR_BATCH_SIZE (100) chunks alone would be 100k events.

/** The default byte bound of a batch (a few tens of thousands of typical events). */
export const BATCH_BYTES = 8 * 1024 * 1024

/**
 * The consumer's max_ack_pending for a batch size. The client keeps pulling while messages wait in
 * the process, so this bounds what it holds: four batches (one committing, one being written, one
 * decided ahead, one gathering).
 */
export const maxAckPending = (batchSize: number) => Math.max(batchSize * 4, 16)

/**
 * How many of the queued messages the next batch takes (up to batchSize, and up to batchBytes of
 * data; at least one), and whether that is a whole batch.
 */
export function batchCut(
  queue: readonly { data: Uint8Array }[],
  batchSize: number,
  batchBytes = BATCH_BYTES,
): { n: number; full: boolean } {
  const max = Math.min(queue.length, batchSize)
  let bytes = 0
  for (let i = 0; i < max; i++) {
    bytes += queue[i]!.data.length
    if (bytes >= batchBytes) return { n: i + 1, full: true }
  }
  return { n: max, full: max === batchSize }
}

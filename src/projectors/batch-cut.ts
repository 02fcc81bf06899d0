// Where a lane consumer cuts its next batch, and how much it may hold delivered but unacked: the
// bounds on a projector process's memory while it lags. A chunk of capture holds up to a thousand
// events (~0.4 MB), so a batch of PROJECTOR_BATCH_SIZE (100) chunks alone would be 100k events, and
// a bound counted in messages (max_ack_pending) is ~160 MB of chunks at 400.

/**
 * The default byte bound of a batch (~10k typical events). 4 MiB rather than 8: a lagging projector
 * has three batches decoded at once (committing, written, decided ahead), and at 8 MiB its RSS
 * peaked ~130 MiB higher working off a backlog, at the same rate and projector CPU per event (and
 * ~20 % more ClickHouse CPU for twice the inserts; docs/performance.md).
 */
export const BATCH_BYTES = 4 * 1024 * 1024

/**
 * The consumer's max_ack_pending for a batch size. The client keeps pulling while messages wait in
 * the process, so this bounds what it holds: four batches (one committing, one being written, one
 * decided ahead, one gathering).
 */
export const maxAckPending = (batchSize: number) => Math.max(batchSize * 4, 16)

/**
 * The bytes of message data a lane consumer holds delivered and unacknowledged before it stops
 * pulling: four batches (one committing, one being written, one decided ahead, one gathering), so
 * a lagging pipeline is never short of a whole next batch.
 */
export const holdBytes = (batchBytes = BATCH_BYTES) => batchBytes * 4

/** What a message may carry beyond its max_payload in a pull's byte count (subject, reply, headers). */
const PULL_OVERHEAD = 4096

/**
 * The max_bytes of the consumer's pulls for a server's max_payload (eight of the largest messages).
 * The server ends a request (409) when the next message is larger than the bytes the request has
 * left, and the client (@nats-io/jetstream 3.4 consume) does not ask again on that answer when it
 * has nothing buffered, only as messages arrive. It keeps what it asked for at least ¾ of this in
 * at most five requests (a new one per ¼ of the bytes or of its 100 messages arrived), but a request
 * made on the message count may ask for less than one message: then all of them can end together,
 * and only its missed-heartbeat check asks afresh (every second here: feed.ts PULL_HEARTBEAT_MS).
 */
export const pullBytes = (maxPayload: number) => 8 * (maxPayload + PULL_OVERHEAD)

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

import { createHash } from 'node:crypto'
import { closeSync, existsSync, openSync, readFileSync, readSync, renameSync, writeFileSync } from 'node:fs'
import { z } from 'zod'

// The checkpoint of an import, next to its input (`<file>.checkpoint`): the byte offset just after
// the last record of the last batch capture acknowledged. A resumed run starts reading there, so no
// acknowledged batch is sent again; the batch in flight at a crash is sent again, and its events
// keep their uuids (given, or derived from the record), so capture's duplicate window and the
// events table's replacing key absorb it.

export const CheckpointSchema = z.object({
  v: z.literal(1),
  format: z.enum(['jsonl', 'csv']),
  /** sha-256 of the file's first bytes: a different file is not resumed by mistake */
  head: z.string(),
  offset: z.number().int().min(0),
  /** lines read up to `offset` */
  line: z.number().int().min(0),
  events: z.number().int().min(0),
  rejected: z.number().int().min(0),
  /** size of the `.rejected` file at `offset`: a resumed run cuts off what was written after it */
  rejectedBytes: z.number().int().min(0),
  /** the CSV header, read once at the start of the file */
  header: z.array(z.string()).nullable(),
  done: z.boolean(),
  updatedAt: z.string(),
})
export type Checkpoint = z.infer<typeof CheckpointSchema>

const HEAD_BYTES = 64 * 1024

export const checkpointPath = (input: string) => `${input}.checkpoint`
export const rejectedPath = (input: string) => `${input}.rejected`

export function fileHead(path: string): string {
  const fd = openSync(path, 'r')
  try {
    const buf = Buffer.alloc(HEAD_BYTES)
    const n = readSync(fd, buf, 0, HEAD_BYTES, 0)
    return createHash('sha256').update(buf.subarray(0, n)).digest('hex')
  } finally {
    closeSync(fd)
  }
}

export function readCheckpoint(path: string): Checkpoint | undefined {
  if (!existsSync(path)) return undefined
  const parsed = CheckpointSchema.safeParse(JSON.parse(readFileSync(path, 'utf8')))
  if (!parsed.success)
    throw new Error(`${path} is not a checkpoint of burrow import; remove it to start over`)
  return parsed.data
}

/** Written to a temporary file and renamed over the old one, so a crash never leaves half a checkpoint. */
export function writeCheckpoint(path: string, c: Checkpoint): void {
  const tmp = `${path}.tmp`
  writeFileSync(tmp, `${JSON.stringify(c)}\n`)
  renameSync(tmp, path)
}

import { appendFileSync, createReadStream, existsSync, statSync, truncateSync, unlinkSync } from 'node:fs'
import { extname } from 'node:path'
import type { Readable } from 'node:stream'
import {
  type Checkpoint,
  checkpointPath,
  fileHead,
  readCheckpoint,
  rejectedPath,
  writeCheckpoint,
} from './checkpoint.ts'
import { type CsvLayout, csvLayout, fromCsvRow, layoutProblem } from './csv-row.ts'
import { fromJsonLine, type Mapped } from './events.ts'
import type { ProgressState } from './progress.ts'
import { CsvSyntaxError, csvRecords, jsonLines, type RawRecord } from './records.ts'
import { batchSender, type SenderOptions } from './sender.ts'

// `burrow import FILE|-`: a historical migration through capture. See docs/projectors.md ("Import").

export type ImportFormat = 'jsonl' | 'csv'

export interface ImportOptions {
  /** a file path, or '-' for `stdin` */
  input: string
  format?: ImportFormat
  url: string
  token: string
  /** events per request (default 1000) */
  batchSize?: number
  /** request body budget in bytes (default 5 MB) */
  maxBatchBytes?: number
  /** ignore (and replace) an existing checkpoint */
  restart?: boolean
  /** where rejected records go; default `<input>.rejected` (`import.rejected` for stdin) */
  rejectedFile?: string
  stdin?: Readable
  progress?: { update(p: ProgressState): void; done(p: ProgressState): void }
  sender?: Partial<Omit<SenderOptions, 'url' | 'token'>>
  /** test hook: capture acknowledged a batch, its checkpoint is not written yet; throwing stops the run */
  onBatchAcked?: (info: { batch: number; events: number; end: number }) => void | Promise<void>
}

export interface ImportSummary {
  input: string
  format: ImportFormat
  /** the checkpoint said the file was imported completely: nothing was sent */
  alreadyDone: boolean
  resumed: boolean
  /** where this run started reading */
  fromOffset: number
  /** how far the input was imported */
  offset: number
  size: number | undefined
  /** lines read, in total (including earlier runs) */
  lines: number
  events: number
  rejected: number
  /** rejected records of this run by reason (the text before the first colon) */
  reasons: Record<string, number>
  complete: boolean
  /** why the run stopped early (a CSV syntax error the parser cannot get past) */
  stoppedBy?: string
  seconds: number
  eventsPerSecond: number
  rejectedFile: string
  checkpointFile: string | undefined
}

interface Rejection {
  line: number
  reason: string
  record: string | string[]
}

const MAX_RECORD_CHARS = 2000

export function formatOf(input: string, given?: ImportFormat): ImportFormat {
  if (given) return given
  return extname(input.replace(/\.(gz|tmp)$/i, '')).toLowerCase() === '.csv' ? 'csv' : 'jsonl'
}

export async function runImport(o: ImportOptions): Promise<ImportSummary> {
  const fromStdin = o.input === '-'
  const format = formatOf(o.input, o.format)
  const size = fromStdin ? undefined : statSync(o.input).size
  const cpFile = fromStdin ? undefined : checkpointPath(o.input)
  const rejFile = o.rejectedFile ?? (fromStdin ? 'import.rejected' : rejectedPath(o.input))
  const head = fromStdin ? '' : fileHead(o.input)

  const cp: Checkpoint | undefined = cpFile && !o.restart ? readCheckpoint(cpFile) : undefined
  if (cp && (cp.head !== head || cp.format !== format || (size !== undefined && cp.offset > size))) {
    throw new Error(
      `${cpFile} belongs to another file or format (the input changed); run with --restart to import it again`,
    )
  }
  const started = Date.now()
  const summary: ImportSummary = {
    input: o.input,
    format,
    alreadyDone: false,
    resumed: !!cp && cp.offset > 0,
    fromOffset: cp?.offset ?? 0,
    offset: cp?.offset ?? 0,
    size,
    lines: cp?.line ?? 0,
    events: cp?.events ?? 0,
    rejected: cp?.rejected ?? 0,
    reasons: {},
    complete: false,
    seconds: 0,
    eventsPerSecond: 0,
    rejectedFile: rejFile,
    checkpointFile: cpFile,
  }
  if (cp?.done) {
    summary.alreadyDone = true
    summary.complete = true
    return summary
  }
  // Rejections written after the checkpoint belong to batches that are read again now.
  if (cp && existsSync(rejFile)) truncateSync(rejFile, cp.rejectedBytes)
  else if (!cp && existsSync(rejFile)) unlinkSync(rejFile)

  const state: Checkpoint = cp ?? {
    v: 1,
    format,
    head,
    offset: 0,
    line: 0,
    events: 0,
    rejected: 0,
    rejectedBytes: 0,
    header: null,
    done: false,
    updatedAt: new Date().toISOString(),
  }
  const progress: ProgressState = {
    offset: state.offset,
    size,
    lines: state.line,
    events: state.events,
    rejected: state.rejected,
    startOffset: state.offset,
    startEvents: state.events,
    startedAt: started,
  }

  const input = fromStdin ? (o.stdin ?? process.stdin) : createReadStream(o.input, { start: state.offset })
  const start = { offset: state.offset, line: state.line }
  const records: AsyncGenerator<RawRecord> =
    format === 'csv' ? csvRecords(input, start) : jsonLines(input, start)

  const send = batchSender({ url: o.url, token: o.token, ...o.sender })
  const batchSize = o.batchSize ?? 1000
  const maxBytes = o.maxBatchBytes ?? 5 * 1024 * 1024
  let layout: CsvLayout | undefined = state.header ? csvLayout(state.header) : undefined
  let events: string[] = []
  let bytes = 0
  let rejections: Rejection[] = []
  // How far the records handled so far reach (sent in the current batch, or rejected).
  let end = state.offset
  let line = state.line
  let batchNo = 0

  // One batch is in flight while the next is read and mapped, so the file's reading and mapping
  // overlap capture's work instead of waiting for each acknowledgement. Only one: capture logs a
  // batch when it acknowledges it, and batches sent together could reach the log out of the file's
  // order, which the projector would then apply (an identify before the events it merges, say).
  // Each batch's rejections and checkpoint are written after its acknowledgement, in order.
  let inFlight: Promise<void> = Promise.resolve()
  const commit = async (batch: {
    events: string[]
    rejections: Rejection[]
    end: number
    line: number
    done: boolean
  }) => {
    if (batch.events.length > 0) {
      await send(batch.events)
      await o.onBatchAcked?.({ batch: ++batchNo, events: batch.events.length, end: batch.end })
    }
    if (batch.rejections.length > 0) {
      appendFileSync(rejFile, batch.rejections.map((r) => `${JSON.stringify(r)}\n`).join(''))
    }
    state.events += batch.events.length
    state.rejected += batch.rejections.length
    state.offset = batch.end
    state.line = batch.line
    state.rejectedBytes = existsSync(rejFile) ? statSync(rejFile).size : 0
    state.done = batch.done
    state.updatedAt = new Date().toISOString()
    if (cpFile) writeCheckpoint(cpFile, state)
    Object.assign(progress, {
      offset: state.offset,
      lines: state.line,
      events: state.events,
      rejected: state.rejected,
    })
    o.progress?.update(progress)
  }
  /** Hands the batch so far on; resolves once the one before it is acknowledged (or, last, itself). */
  const flush = async (done: boolean) => {
    const batch = { events, rejections, end, line, done }
    events = []
    bytes = 0
    rejections = []
    await inFlight
    inFlight = commit(batch)
    // Its failure is seen where it is awaited next; until then it is not an unhandled rejection.
    inFlight.catch(() => {})
    if (done) await inFlight
  }
  const reject = (r: RawRecord, reason: string) => {
    const record = r.text !== undefined ? r.text.slice(0, MAX_RECORD_CHARS) : (r.values ?? [])
    rejections.push({ line: r.line, reason, record })
    const kind = reason.split(':')[0]!
    summary.reasons[kind] = (summary.reasons[kind] ?? 0) + 1
  }

  try {
    for await (const r of records) {
      if (r.kind === 'csv' && !layout) {
        // The first record of a CSV file is its header.
        state.header = r.values ?? []
        layout = csvLayout(state.header)
        const problem = layoutProblem(layout)
        if (problem) throw new Error(`${o.input} is not an event export: ${problem}`)
        end = r.end
        line = r.endLine
        continue
      }
      const mapped: Mapped =
        r.kind === 'csv' ? fromCsvRow(layout!, r.values ?? []) : fromJsonLine(r.text ?? '')
      if ('error' in mapped) {
        reject(r, mapped.error)
      } else {
        const size = Buffer.byteLength(mapped.json)
        // Over the byte budget, the batch so far goes first; this record starts the next one.
        if (events.length > 0 && bytes + size > maxBytes) await flush(false)
        events.push(mapped.json)
        bytes += size
      }
      end = r.end
      line = r.endLine
      if (events.length >= batchSize) await flush(false)
    }
    await flush(true)
    summary.complete = true
  } catch (err) {
    if (!(err instanceof CsvSyntaxError)) throw err
    // A quote never closed swallows the rest of the file: what came before it is imported.
    await flush(false)
    await inFlight
    summary.stoppedBy = `line ${err.line}: ${err.message}; the rest of the file was not read`
    appendFileSync(rejFile, `${JSON.stringify({ line: err.line, reason: err.message, record: '' })}\n`)
    summary.reasons['CSV syntax'] = (summary.reasons['CSV syntax'] ?? 0) + 1
    state.rejected++
    state.rejectedBytes = statSync(rejFile).size
    if (cpFile) writeCheckpoint(cpFile, state)
  } finally {
    // A batch still in flight when reading failed settles before the run ends (its error, if any, is
    // the reading's to report, not a second one).
    await inFlight.catch(() => {})
    if (!fromStdin) (input as ReturnType<typeof createReadStream>).destroy()
  }
  o.progress?.done(progress)
  summary.offset = state.offset
  summary.lines = state.line
  summary.events = state.events
  summary.rejected = state.rejected
  summary.seconds = (Date.now() - started) / 1000
  const sent = state.events - (cp?.events ?? 0)
  summary.eventsPerSecond = Math.round(sent / Math.max(summary.seconds, 1e-3))
  return summary
}

import type { Readable } from 'node:stream'

// The records of a migration file with where each ends in the file, so that an import can resume
// after the last record whose batch capture acknowledged. Offsets are bytes from the start of the
// file (the reader is given the offset it starts at).

export interface RawRecord {
  /** 1-based line where the record starts */
  line: number
  /** line where it ends (a quoted CSV field may span lines) */
  endLine: number
  /** byte offset just after the record (and its line break) */
  end: number
  kind: 'json' | 'csv'
  /** the line (JSON lines) */
  text?: string
  /** the cells (CSV) */
  values?: string[]
}

const NEWLINE = 0x0a

/** JSON lines; blank lines are skipped. Lines end with \n or \r\n. */
export async function* jsonLines(input: Readable, start: { offset: number; line: number }) {
  let offset = start.offset
  let line = start.line
  let pending: Buffer[] = []
  let pendingBytes = 0
  const emit = (buf: Buffer): RawRecord | undefined => {
    line++
    offset += buf.length
    let text = buf.toString('utf8')
    if (text.endsWith('\n')) text = text.slice(0, -1)
    if (text.endsWith('\r')) text = text.slice(0, -1)
    if (text.trim() === '') return undefined
    return { line, endLine: line, end: offset, kind: 'json', text }
  }
  for await (const chunk of input as AsyncIterable<Buffer>) {
    let from = 0
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, from)
      if (nl < 0) break
      const piece = chunk.subarray(from, nl + 1)
      const whole = pendingBytes > 0 ? Buffer.concat([...pending, piece]) : piece
      pending = []
      pendingBytes = 0
      const r = emit(whole)
      if (r) yield r
      from = nl + 1
    }
    if (from < chunk.length) {
      pending.push(chunk.subarray(from))
      pendingBytes += chunk.length - from
    }
  }
  if (pendingBytes > 0) {
    const r = emit(Buffer.concat(pending))
    if (r) yield r
  }
}

export class CsvSyntaxError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(message)
    this.name = 'CsvSyntaxError'
  }
}

/**
 * CSV records (RFC 4180: quoted fields may hold separators, quotes and line breaks). The parser's
 * byte count after each record gives its end offset. A syntax error the parser cannot recover from
 * (a quote never closed) ends the file with a CsvSyntaxError naming the line.
 */
export async function* csvRecords(input: Readable, start: { offset: number; line: number }) {
  // Loaded on first use: JSON lines imports do not need it.
  const { parse } = await import('csv-parse')
  const parser = parse({
    info: true,
    bom: start.offset === 0,
    relax_column_count: true,
    relax_quotes: true,
    skip_empty_lines: true,
  })
  input.on('error', (err) => parser.destroy(err))
  input.pipe(parser)
  // Line numbers are counted here: the parser counts a \r\n inside a quoted field as two lines.
  let line = start.line
  let emptySeen = 0
  try {
    for await (const item of parser as AsyncIterable<{
      record: string[]
      info: { bytes_records: number; empty_lines: number }
    }>) {
      const first = line + 1 + (item.info.empty_lines - emptySeen)
      emptySeen = item.info.empty_lines
      let breaks = 0
      for (const cell of item.record)
        for (let i = cell.indexOf('\n'); i >= 0; i = cell.indexOf('\n', i + 1)) breaks++
      line = first + breaks
      yield {
        line: first,
        endLine: line,
        end: start.offset + item.info.bytes_records,
        kind: 'csv',
        values: item.record,
      } satisfies RawRecord
    }
  } catch (err) {
    const e = err as Error & { code?: string; lines?: number }
    throw new CsvSyntaxError(`${e.code ?? 'CSV'}: ${e.message}`, line + 1)
  }
}

import { parseError } from '@clickhouse/client'

// A JSONCompact answer read row by row as its bytes arrive, instead of one JSON.parse of the whole
// text: ClickHouse writes each row of `data` on a line of its own (two tabs, then `[`), so each row
// is parsed alone, in the network event that completed it, with other requests answered in between.
// A 99 MB answer parsed at once held the event loop for seconds; here the largest piece parsed at
// once is one row, and a row longer than the cap is refused before it is held whole (a single cell
// of `groupArray(number) FROM numbers(10000000)` is 79 MB: refused once 4 MiB of it has arrived).

/** A row of the answer is longer than its reader's cap (bytes of its JSON text). */
export class RowTooLarge extends Error {
  constructor(readonly maxRowBytes: number) {
    super(`A row of the answer is larger than ${maxRowBytes} bytes.`)
    this.name = 'RowTooLarge'
  }
}

/** The answer holds more cells (rows × columns) than its reader's cap. */
export class TooManyCells extends Error {
  constructor(readonly maxCells: number) {
    super(`The answer has more than ${maxCells} cells.`)
    this.name = 'TooManyCells'
  }
}

/** The answer as JSONCompact's document has it, with `data` filled row by row. */
export interface CompactAnswer {
  meta: { name: string; type: string }[]
  data: unknown[][]
  rows?: number
  statistics?: { rows_read?: number; bytes_read?: number; elapsed?: number }
  exception?: string
}

const NEWLINE = 10

/** Feeds on an answer's chunks (push) and gives the document at the end (finish); throws as it reads. */
export class CompactRows {
  private readonly parts: Buffer[] = []
  private partLength = 0
  private state: 'head' | 'data' | 'tail' = 'head'
  /** the document without its rows: what comes before `data`'s rows and after them */
  private frame = ''
  private row: string | null = null
  private types: string[] = []
  private readonly data: unknown[][] = []
  private cells = 0

  /**
   * @param mapRow applied to each row as it is parsed (e.g. numbers ClickHouse quotes); gets the
   *   column types
   */
  constructor(
    private readonly maxRowBytes: number,
    private readonly mapRow: (row: unknown[], types: string[]) => unknown[] = (r) => r,
    /** the most cells (rows × columns) read; past it TooManyCells */
    private readonly maxCells = Number.POSITIVE_INFINITY,
  ) {}

  push(chunk: Buffer): void {
    let from = 0
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, from)
      if (nl < 0) break
      this.parts.push(chunk.subarray(from, nl))
      this.partLength += nl - from
      this.line(Buffer.concat(this.parts, this.partLength).toString('utf8'))
      this.parts.length = 0
      this.partLength = 0
      from = nl + 1
    }
    if (from < chunk.length) {
      this.parts.push(chunk.subarray(from))
      this.partLength += chunk.length - from
      // a row still arriving: refused as soon as it is past the cap, never held whole
      if (this.state === 'data' && this.partLength + (this.row?.length ?? 0) > this.maxRowBytes) {
        throw new RowTooLarge(this.maxRowBytes)
      }
    }
  }

  finish(): CompactAnswer {
    if (this.partLength > 0) this.line(Buffer.concat(this.parts, this.partLength).toString('utf8'))
    this.endRow()
    let doc: CompactAnswer
    try {
      doc = JSON.parse(this.frame) as CompactAnswer
    } catch (err) {
      // an exception raised after the answer began streams after the rows, with status 200
      const at = this.frame.search(/Code: \d+\. DB::Exception/)
      throw at >= 0 ? parseError(this.frame.slice(at)) : err
    }
    // 24.11+ writes an exception raised mid-answer into the document (http_write_exception_in_output_format)
    if (typeof doc.exception === 'string') throw parseError(doc.exception)
    doc.data = this.data
    return doc
  }

  private line(text: string): void {
    if (this.state === 'head') {
      this.frame += `${text}\n`
      // `\t"data":` then `\t[`: the rows follow
      if (text === '\t[' && this.frame.endsWith('"data":\n\t[\n')) {
        const meta = (JSON.parse(`${this.frame}]}`) as CompactAnswer).meta
        this.types = meta.map((m) => m.type)
        this.state = 'data'
      }
      return
    }
    if (this.state === 'tail') {
      this.frame += `${text}\n`
      return
    }
    if (text === '') return // an answer without rows has an empty line there
    if (text.startsWith('\t]')) {
      this.endRow()
      this.frame += `${text}\n`
      this.state = 'tail'
    } else if (text.startsWith('\t\t[') || this.row === null) {
      // a new row (a row that spans lines, a pretty-printed value, goes on with deeper indents)
      this.endRow()
      this.row = text
    } else {
      this.row += `\n${text}`
    }
    if ((this.row?.length ?? 0) > this.maxRowBytes) throw new RowTooLarge(this.maxRowBytes)
  }

  private endRow(): void {
    if (this.row === null) return
    const text = this.row.trim().replace(/,$/, '')
    this.row = null
    let row: unknown[]
    try {
      row = JSON.parse(text) as unknown[]
    } catch (err) {
      const at = text.search(/Code: \d+\. DB::Exception/)
      throw at >= 0 ? parseError(text.slice(at)) : err
    }
    this.cells += row.length
    if (this.cells > this.maxCells) throw new TooManyCells(this.maxCells)
    this.data.push(this.mapRow(row, this.types))
  }
}

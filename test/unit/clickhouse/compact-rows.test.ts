import { describe, expect, it } from 'vitest'
import { CompactRows, RowTooLarge } from '../../../src/clickhouse/compact-rows.ts'

// JSONCompact as ClickHouse 26.7 writes it (a server's answer to
// SELECT [1,2] AS a, map('a',1) AS m, 'x\ny' AS s FROM numbers(2)).
const ANSWER = `{
\t"meta":
\t[
\t\t{
\t\t\t"name": "a",
\t\t\t"type": "Array(UInt8)"
\t\t},
\t\t{
\t\t\t"name": "m",
\t\t\t"type": "Map(String, UInt8)"
\t\t},
\t\t{
\t\t\t"name": "s",
\t\t\t"type": "String"
\t\t}
\t],

\t"data":
\t[
\t\t[[1,2], {"a":1}, "x\\ny"],
\t\t[[1,2], {"a":1}, "x\\ny"]
\t],

\t"rows": 2,

\t"statistics":
\t{
\t\t"elapsed": 0.004764341,
\t\t"rows_read": 2,
\t\t"bytes_read": 16
\t}
}
`

function read(
  text: string,
  chunk: number,
  maxRowBytes = 1_000_000,
  mapRow?: (r: unknown[], t: string[]) => unknown[],
) {
  const r = new CompactRows(maxRowBytes, mapRow)
  const b = Buffer.from(text)
  for (let i = 0; i < b.length; i += chunk) r.push(b.subarray(i, i + chunk))
  return r.finish()
}

describe('CompactRows', () => {
  it('gives what JSON.parse of the whole answer gives, whatever the chunk boundaries', () => {
    const whole = JSON.parse(ANSWER)
    for (const chunk of [1, 2, 3, 7, 64, 100_000]) expect(read(ANSWER, chunk)).toEqual(whole)
  })

  it('reads an answer without rows (ClickHouse leaves an empty line where they would be)', () => {
    const empty = ANSWER.replace(/\t"data":\n\t\[\n[^]*?\n\t\],/, '\t"data":\n\t[\n\n\t],')
    expect(empty).toContain('"data":\n\t[\n\n\t],')
    for (const chunk of [1, 5, 1000]) expect(read(empty, chunk).data).toEqual([])
  })

  it('maps each row with the column types as it is parsed', () => {
    const out = read(ANSWER, 5, 1_000_000, (row, types) => [types.join('|'), row.length])
    expect(out.data).toEqual([
      ['Array(UInt8)|Map(String, UInt8)|String', 3],
      ['Array(UInt8)|Map(String, UInt8)|String', 3],
    ])
  })

  it('reads a row pretty-printed over several lines', () => {
    const pretty = ANSWER.replace(
      '\t\t[[1,2], {"a":1}, "x\\ny"],\n',
      '\t\t[[1,2], {\n\t\t\t"a": 1\n\t\t}, "x\\ny"],\n',
    )
    expect(read(pretty, 4)).toEqual(JSON.parse(ANSWER))
  })

  it('refuses a row longer than its cap before the row has arrived whole', () => {
    const r = new CompactRows(100)
    r.push(Buffer.from(ANSWER.slice(0, ANSWER.indexOf('\t\t[[1,2]'))))
    r.push(Buffer.from(`\t\t[[${'1,'.repeat(40)}`))
    expect(() => r.push(Buffer.from('1,'.repeat(40)))).toThrow(RowTooLarge)
  })

  it('throws the exception ClickHouse writes after the rows', () => {
    const broken = ANSWER.replace(
      '"x\\ny"]\n\t],\n',
      '"x\\ny"]\nCode: 241. DB::Exception: Memory limit (for query) exceeded. (MEMORY_LIMIT_EXCEEDED)\n\t],\n',
    )
    expect(() => read(broken, 16)).toThrow(/Memory limit/)
    const inDoc = ANSWER.replace(
      '\t"rows": 2,',
      '\t"rows": 2,\n\t"exception": "Code: 159. DB::Exception: Timeout exceeded. (TIMEOUT_EXCEEDED)",',
    )
    expect(() => read(inDoc, 16)).toThrow(/Timeout exceeded/)
  })
})

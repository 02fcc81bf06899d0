import { type Node, span } from './ast.ts'
import { HogQLError } from './errors.ts'
import type { SampleRange } from './ir.ts'
import type { TableDef } from './schema.ts'

// `SAMPLE k [OFFSET m]`. PostHog's events table is sampled by cityHash64(distinct_id), and
// ClickHouse's relative sampling is a fixed range of that key: rows whose key lies in
// [m * 2^64, (m + k) * 2^64). Burrow's events table has no SAMPLE BY clause, but the same range
// written as a condition selects exactly the rows PostHog's server reads (same hash, same
// distinct ids), so the sample is answered as PostHog answers it. The other tables have no sampling
// key in PostHog either: only `SAMPLE 1` (no sampling) is accepted there.

/** The size of the UInt64 key's range: 2^64. */
const UNIVERSE = 1n << 64n

/** A ratio as an exact fraction of whole numbers. */
interface Fraction {
  n: bigint
  d: bigint
}

// A decimal literal as an exact fraction (0.1 → 1/10): the shortest text JavaScript gives a number
// is the literal the user wrote for any value a query would use.
function fractionOf(value: number, node: Node): Fraction {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(String(value))
  if (!m)
    throw new HogQLError(
      'bad_argument',
      'SAMPLE takes a non-negative number or a ratio, e.g. SAMPLE 0.1',
      span(node),
    )
  const frac = m[2] ?? ''
  return { n: BigInt(m[1]! + frac), d: 10n ** BigInt(frac.length) }
}

function ratioOf(node: Node): Fraction {
  const part = (x: Node | undefined): Fraction => {
    if (x?.node !== 'Constant' || typeof x.value !== 'number') {
      throw new HogQLError(
        'bad_argument',
        'SAMPLE takes constant numbers, e.g. SAMPLE 1/10 OFFSET 1/2',
        span(node),
      )
    }
    return fractionOf(x.value as number, x)
  }
  const left = part(node.left as Node | undefined)
  if (!node.right) return left
  const right = part(node.right as Node)
  if (right.n === 0n) throw new HogQLError('bad_argument', 'SAMPLE ratio divides by zero', span(node))
  return { n: left.n * right.d, d: left.d * right.n }
}

/**
 * The key range `SAMPLE` selects on `table`, or undefined when it selects every row (`SAMPLE 1`).
 * Refuses what has no sampling key or no fixed answer (an absolute `SAMPLE 10000`, an offset past 1).
 */
export function sampleRange(sample: Node, table: TableDef | undefined): SampleRange | undefined {
  const k = ratioOf(sample.sample_value as Node)
  const offset = sample.offset_value ? ratioOf(sample.offset_value as Node) : { n: 0n, d: 1n }
  if (k.n === k.d && offset.n === 0n) return undefined
  if (k.n === 0n) throw new HogQLError('bad_argument', 'SAMPLE ratio must be above 0', span(sample))
  if (k.n > k.d) {
    throw new HogQLError(
      'not_supported',
      'SAMPLE with a row count (SAMPLE n, n > 1) is not supported: its rows depend on the server; use a ratio, e.g. SAMPLE 0.1',
      span(sample),
    )
  }
  if (offset.n > offset.d) {
    throw new HogQLError('bad_argument', 'SAMPLE ... OFFSET takes a ratio between 0 and 1', span(sample))
  }
  if (table?.name !== 'events') {
    throw new HogQLError(
      'not_supported',
      `SAMPLE needs a table with a sampling key: only events has one (cityHash64(distinct_id)); ${
        table ? `'${table.name}'` : 'a subquery'
      } has none`,
      span(sample),
    )
  }
  // As ClickHouse computes the bounds: each truncated to a whole key; no upper bound at the end.
  const lower = (offset.n * UNIVERSE) / offset.d
  const upperNum = (offset.n * k.d + k.n * offset.d) * UNIVERSE
  const upperDen = offset.d * k.d
  const upper = upperNum / upperDen
  return { lower, upper: upper >= UNIVERSE ? undefined : upper }
}

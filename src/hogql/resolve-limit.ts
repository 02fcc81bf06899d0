import { isConstant } from './analysis.ts'
import { type Node, span } from './ast.ts'
import { HogQLError } from './errors.ts'
import type { Expr } from './ir.ts'
import type { Resolution, Scope } from './resolve-context.ts'

// LIMIT and OFFSET values. PostHog accepts any constant expression there, scalar subqueries
// included (`LIMIT (SELECT 100000000)`), and caps the LIMIT at its maximum. Whole-number
// arithmetic of literals (`LIMIT 1 + 1`) is computed here, so the cap and the check of the value
// (a negative one is a 400) need no server; other expressions are printed for the server to
// compute, capped with least().

/** A LIMIT/OFFSET value: a whole number, or an expression the server computes. */
export type LimitValue = number | Expr

// Whole-number arithmetic of constants, or undefined when `e` is anything else.
function fold(e: Expr): number | undefined {
  if (e.k === 'const') return typeof e.value === 'number' && Number.isInteger(e.value) ? e.value : undefined
  if (e.k === 'op' && !e.ifNull) {
    const a = fold(e.left)
    const b = fold(e.right)
    if (a === undefined || b === undefined) return undefined
    const v = e.op === '+' ? a + b : e.op === '-' ? a - b : e.op === '*' ? a * b : undefined
    return v !== undefined && Number.isSafeInteger(v) ? v : undefined
  }
  return undefined
}

// The same for every row: constants, functions of them and scalar subqueries (which in HogQL
// cannot refer to the outer query).
function rowIndependent(e: Expr): boolean {
  if (e.k === 'subquery') return true
  if (isConstant(e)) return true
  if (e.k === 'call')
    return !e.fn.agg && e.args.every(rowIndependent) && (e.params ?? []).every(rowIndependent)
  if (e.k === 'op') return rowIndependent(e.left) && rowIndependent(e.right)
  return false
}

/** The value of `LIMIT node` / `OFFSET node` (`what` names the clause in errors). */
export function limitValue(r: Resolution, node: Node, scope: Scope, what: string): LimitValue {
  const e = r.expr(node, scope)
  const n = fold(e)
  // a literal that is no whole number (NULL, 1.5, 'a') or a negative one
  if ((n !== undefined && n < 0) || (n === undefined && e.k === 'const')) {
    throw new HogQLError('bad_limit', `${what} must be a non-negative whole number`, span(node))
  }
  if (n !== undefined) return n
  if (!rowIndependent(e)) {
    throw new HogQLError(
      'bad_limit',
      `${what} must be a constant: a whole number, an expression of constants or a scalar subquery`,
      span(node),
    )
  }
  return e
}

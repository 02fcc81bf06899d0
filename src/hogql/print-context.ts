import type { Expr, Query, Source } from './ir.ts'

// The shared vocabulary of the printer's parts (printer.ts: statements and SELECT levels;
// print-relations.ts: tables, subqueries, joins and the team guard; print-expr.ts: expressions).
// They call each other through `PrintContext`, which printer.ts implements.

/** Whose data a statement reads and how times are shown. */
export interface PrintOptions {
  teamId: number
  tz: string
}

/** How one SELECT level names what it reads. */
export interface Level {
  /** The printed reference to a source's column at this level. */
  ref: (src: Source, column: string) => string
  /** Expressions already computed by an inner level, printed as that level's column. */
  pre?: Map<Expr, string>
}

/** What the printer's parts ask of each other; implemented once, by Printer. */
export interface PrintContext {
  readonly opts: PrintOptions
  /** A whole query (a subquery, a branch of a union, a joined query). */
  query(q: Query): string
  /** An expression at `level`. */
  expr(e: Expr, level: Level): string
}

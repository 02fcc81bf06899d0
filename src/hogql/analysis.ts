import type { Expr, Select, Source } from './ir.ts'
import { ExprVisitor } from './visitor.ts'

// Questions the resolver and the printer ask about expressions, each one override of the walk.

// A search: the walk stops at the first node that answers it.
abstract class Finder extends ExprVisitor {
  found = false
  protected hit(): void {
    this.found = true
    this.stop = true
  }
  /** Whether `e` holds what the finder looks for. */
  test(e: Expr): boolean {
    this.visit(e)
    return this.found
  }
}

class AggregateFinder extends Finder {
  protected override visitCall(e: Extract<Expr, { k: 'call' }>): void {
    if (e.fn.agg) this.hit()
    else super.visitCall(e)
  }
}

/** Whether `e` calls an aggregate function at this level (subqueries are their own level). */
export function hasAggregate(e: Expr): boolean {
  return new AggregateFinder().test(e)
}

class SourceCollector extends ExprVisitor {
  constructor(readonly out: Set<Source>) {
    super()
  }
  protected override visitCol(e: Extract<Expr, { k: 'col' }>): void {
    this.out.add(e.src)
  }
  protected override visitProp(e: Extract<Expr, { k: 'prop' }>): void {
    this.out.add(e.src)
  }
}

/** The sources whose columns `e` reads at this level (through select-item references too). */
export function sourcesOf(e: Expr, out = new Set<Source>()): Set<Source> {
  new SourceCollector(out).visit(e)
  return out
}

class LevelNameFinder extends Finder {
  protected override visitItem(): void {
    this.hit()
  }
  protected override visitIdent(): void {
    this.hit()
  }
  protected override visitLambda(): void {
    this.hit()
  }
  protected override visitWindow(): void {
    this.hit()
  }
}

/** Whether `e` names something that exists only at its own level: a select item, a lambda or ARRAY JOIN name, a window. */
export function mentionsLevelNames(e: Expr): boolean {
  return new LevelNameFinder().test(e)
}

class BoundNameCollector extends ExprVisitor {
  readonly names: string[] = []
  protected override visitIdent(e: Extract<Expr, { k: 'ident' }>): void {
    this.names.push(e.name)
  }
  protected override visitLambda(e: Extract<Expr, { k: 'lambda' }>): void {
    this.names.push(...e.args)
    super.visitLambda(e)
  }
}

/** Every lambda argument, ARRAY JOIN alias and bare name used in one SELECT level. */
export function boundNames(s: Select): string[] {
  const v = new BoundNameCollector()
  v.visitSelect(s)
  for (const a of s.arrayJoin?.items ?? []) v.names.push(a.alias)
  return v.names
}

// Level names, and everything else that differs by row: columns, properties, subqueries, aggregates.
class RowReferenceFinder extends LevelNameFinder {
  protected override visitCol(): void {
    this.hit()
  }
  protected override visitProp(): void {
    this.hit()
  }
  protected override visitSubquery(): void {
    this.hit()
  }
  protected override visitCall(e: Extract<Expr, { k: 'call' }>): void {
    if (e.fn.agg) this.hit()
    else super.visitCall(e)
  }
}

/** Whether `e` is the same for every row: it reads no column, name, subquery or aggregate. */
export function isConstant(e: Expr): boolean {
  return !new RowReferenceFinder().test(e)
}

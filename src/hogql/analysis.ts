import type { Expr, Select, Source } from './ir.ts'
import { ExprVisitor } from './visitor.ts'

// Questions the resolver and the printer ask about expressions, each one override of the walk.

class AggregateFinder extends ExprVisitor {
  found = false
  protected override visitCall(e: Extract<Expr, { k: 'call' }>): void {
    if (e.fn.agg) {
      this.found = true
      this.stop = true
      return
    }
    super.visitCall(e)
  }
}

/** Whether `e` calls an aggregate function at this level (subqueries are their own level). */
export function hasAggregate(e: Expr): boolean {
  const v = new AggregateFinder()
  v.visit(e)
  return v.found
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

class LevelNameFinder extends ExprVisitor {
  found = false
  private hit(): void {
    this.found = true
    this.stop = true
  }
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
  const v = new LevelNameFinder()
  v.visit(e)
  return v.found
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

class RowReferenceFinder extends ExprVisitor {
  found = false
  private hit(): void {
    this.found = true
    this.stop = true
  }
  protected override visitCol(): void {
    this.hit()
  }
  protected override visitProp(): void {
    this.hit()
  }
  protected override visitItem(): void {
    this.hit()
  }
  protected override visitIdent(): void {
    this.hit()
  }
  protected override visitLambda(): void {
    this.hit()
  }
  protected override visitSubquery(): void {
    this.hit()
  }
  protected override visitCall(e: Extract<Expr, { k: 'call' }>): void {
    if (e.fn.agg) this.hit()
    else super.visitCall(e)
  }
  protected override visitWindow(): void {
    this.hit()
  }
}

/** Whether `e` is the same for every row: it reads no column, name, subquery or aggregate. */
export function isConstant(e: Expr): boolean {
  const v = new RowReferenceFinder()
  v.visit(e)
  return !v.found
}

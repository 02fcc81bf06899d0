import type { Expr, Select, WindowSpec } from './ir.ts'

// The one walk over the resolved IR. Every analysis that needs to look inside expressions (which
// sources they read, whether they aggregate, which names they bind) extends this class and
// overrides only the node kinds it cares about; the default for each kind visits its children.
// A subquery expression is its own scope: the walk does not enter it unless an analysis asks to.

type Of<K extends Expr['k']> = Extract<Expr, { k: K }>

/** Visits every node of an expression tree, children after their parent; set `stop` to end early. */
export class ExprVisitor {
  /** Set by an analysis that has its answer: the walk visits nothing more. */
  protected stop = false

  /** Visits `e` and, through the per-kind methods, its children. */
  visit(e: Expr | undefined): void {
    if (!e || this.stop) return
    switch (e.k) {
      case 'const':
        return this.visitConst(e)
      case 'col':
        return this.visitCol(e)
      case 'prop':
        return this.visitProp(e)
      case 'item':
        return this.visitItem(e)
      case 'call':
        return this.visitCall(e)
      case 'op':
        return this.visitOp(e)
      case 'and':
      case 'or':
        return this.visitJunction(e)
      case 'not':
        return this.visitNot(e)
      case 'lambda':
        return this.visitLambda(e)
      case 'ident':
        return this.visitIdent(e)
      case 'array':
      case 'tuple':
        return this.visitList(e)
      case 'subquery':
        return this.visitSubquery(e)
      case 'template':
        return this.visitTemplate(e)
      case 'window':
        return this.visitWindow(e)
    }
  }

  /** Visits the expressions of a window definition (partitions and order). */
  visitWindowSpec(w: WindowSpec): void {
    for (const p of w.partitionBy) this.visit(p)
    for (const o of w.orderBy) this.visit(o.expr)
  }

  /** Visits every expression of one SELECT level (sources' ON, ARRAY JOIN, items, clauses). */
  visitSelect(s: Select): void {
    for (const src of s.sources) this.visit(src.on)
    for (const a of s.arrayJoin?.items ?? []) this.visit(a.expr)
    for (const i of s.items) this.visit(i.expr)
    this.visit(s.where)
    for (const g of s.groupBy ?? []) this.visit(g)
    this.visit(s.having)
    for (const o of s.orderBy ?? []) this.visit(o.expr)
    for (const e of s.limitBy?.exprs ?? []) this.visit(e)
    for (const w of Object.values(s.windows ?? {})) this.visitWindowSpec(w)
  }

  protected visitConst(_e: Of<'const'>): void {}
  protected visitCol(_e: Of<'col'>): void {}
  protected visitProp(_e: Of<'prop'>): void {}
  protected visitIdent(_e: Of<'ident'>): void {}
  protected visitSubquery(_e: Of<'subquery'>): void {}

  protected visitItem(e: Of<'item'>): void {
    this.visit(e.item.expr)
  }
  protected visitCall(e: Of<'call'>): void {
    for (const a of e.args) this.visit(a)
    for (const p of e.params ?? []) this.visit(p)
  }
  protected visitOp(e: Of<'op'>): void {
    this.visit(e.left)
    this.visit(e.right)
  }
  protected visitJunction(e: Of<'and' | 'or'>): void {
    for (const i of e.items) this.visit(i)
  }
  protected visitNot(e: Of<'not'>): void {
    this.visit(e.expr)
  }
  protected visitLambda(e: Of<'lambda'>): void {
    this.visit(e.body)
  }
  protected visitList(e: Of<'array' | 'tuple'>): void {
    for (const i of e.items) this.visit(i)
  }
  protected visitTemplate(e: Of<'template'>): void {
    for (const a of e.args) this.visit(a)
  }
  protected visitWindow(e: Of<'window'>): void {
    for (const a of e.args) this.visit(a)
    for (const p of e.params ?? []) this.visit(p)
    if (typeof e.over !== 'string') this.visitWindowSpec(e.over)
  }
}

// Long because a parser is one unit: its lexer and the grammar subset it accepts are checked together
// against PostHog's parser (test/unit/hogql/fast-parse.test.ts); split, neither half is testable alone.
// A hand-written parser for the common subset of HogQL SELECT statements, producing the same JSON
// tree as @posthog/hogql-parser (which stays the authority). It exists for speed: the WebAssembly
// parser costs ~6 ms for an insight-sized statement, this one a few hundredths of that.
// Anything outside the subset, and every syntax error, throws FAST_PARSE_UNSUPPORTED so the caller
// falls back to PostHog's parser (errors, their messages and spans always come from there).
// test/unit/hogql/fast-parse.test.ts compares both parsers on every statement of the test corpus
// and on thousands of mutated ones.
import type { Node, Pos, QueryNode } from './ast.ts'

/** Whether PostHog's lexer reads a lower-case word of letters as a plain IDENTIFIER (not a keyword). */
export type IsIdentifier = (word: string) => boolean

class Unsupported extends Error {}
/** Thrown (one shared instance: bailing is routine, a stack trace each time is not) when the text is outside the subset. */
export const FAST_PARSE_UNSUPPORTED = new Unsupported('outside the fast parser subset')

function bail(): never {
  throw FAST_PARSE_UNSUPPORTED
}

// Words the lexer makes keywords (HogQLLexer.g4). The installed parser knows more than the published
// grammar says (QUALIFY, EXCLUDE, PIVOT, ...), and a keyword taken for a name changes the tree, so
// a word made of letters only is a name here only when PostHog's parser says so too (the
// IsIdentifier oracle, which parse.ts answers by asking it once per word); words with `$`, `_` or
// digits are never keywords.
const KEYWORDS = new Set(
  (
    'all and anti any array as asc ascending asof between both by case cast catch cohort collate cross ' +
    'cube current date day desc descending distinct else end extract final finally first fn following ' +
    'for from full fun group having hour id if ilike in inf infinity inner intersect interval is join ' +
    'key last leading left let like limit minute month nan not null nulls offset on or order outer over ' +
    'partition preceding prewhere quarter range return right rollup row rows sample second select semi ' +
    'settings substring then throw ties timestamp to top totals trailing trim truncate try unbounded ' +
    'union using week when where while window with year yyyy'
  ).split(' '),
)
// Keywords that PostHog's parser reads as a plain column name, and takes after AS as an alias
// (checked against it); the others start constructs (CASE, CAST, INTERVAL...) this parser leaves out.
const KEYWORD_FIELDS = new Set(['timestamp', 'date', 'id', 'key', 'first', 'last', 'day', 'year'])
// Keywords PostHog's parser accepts as a function name (checked against it).
const KEYWORD_CALLS = new Set(['if', 'left', 'date'])
// Words that cannot be an identifier at all, or that the visitor turns into constants.
const CONSTANT_WORDS = new Set(['true', 'false', 'null', 'inf', 'infinity', 'nan'])
// Names PostHog's parser refuses as an alias ("... is a reserved keyword").
const RESERVED_ALIASES = new Set(['true', 'false', 'null', 'team_id'])

const enum T {
  Word, // identifier or keyword (v: the text as written)
  Quoted, // `x` or "x" (v: the decoded name)
  Num,
  Str, // v: the decoded value
  Op, // punctuation and operators (v: the text)
  End,
}

interface Tok {
  t: T
  v: string
  /** lower-case text for words */
  k: string
  s: number
  e: number
}

const OPS3 = ['=~*', '!~*']
const OPS2 = ['==', '!=', '<>', '<=', '>=', '=~', '~*', '!~', '||', '->', '??', '?.', '::']
const OPS1 = '()[]{},.*/%+-=<>~?:;#'

function isWordStart(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || c === 36
}
function isDigit(c: number): boolean {
  return c >= 48 && c <= 57
}

function decodeQuoted(text: string, quote: string): string {
  // Backslash escapes are left to PostHog's parser (its handling of the rarer ones is its own).
  let out = ''
  for (let i = 1; i < text.length - 1; i++) {
    const ch = text[i]
    if (ch === '\\') {
      const n = text[i + 1]
      if (n === 'n') out += '\n'
      else if (n === 't') out += '\t'
      else if (n === 'r') out += '\r'
      else if (n === '\\') out += '\\'
      else if (n === "'" && quote === "'") out += "'"
      else bail()
      i++
    } else if (ch === quote) {
      out += quote // a doubled quote (the lexer guarantees the pair)
      i++
    } else out += ch
  }
  return out
}

function lex(text: string): Tok[] {
  // offsets of non-ASCII text (PostHog's parser counts bytes in places): not worth the doubt
  if (/[^\t\n\v\f\r -~]/.test(text)) bail()
  const toks: Tok[] = []
  const n = text.length
  let i = 0
  while (i < n) {
    const c = text.charCodeAt(i)
    if (c === 32 || c === 9 || c === 10 || c === 13 || c === 11 || c === 12) {
      i++
      continue
    }
    if ((c === 45 && text.charCodeAt(i + 1) === 45) || (c === 47 && text.charCodeAt(i + 1) === 47)) {
      while (i < n && text[i] !== '\n' && text[i] !== '\r') i++
      continue
    }
    if (c === 47 && text.charCodeAt(i + 1) === 42) {
      const close = text.indexOf('*/', i + 2)
      if (close < 0) bail()
      i = close + 2
      continue
    }
    const s = i
    if (isWordStart(c)) {
      i++
      while (i < n) {
        const d = text.charCodeAt(i)
        if (isWordStart(d) || isDigit(d)) i++
        else break
      }
      const v = text.slice(s, i)
      // f'...' and F'...' are template strings
      if (text[i] === "'" || text[i] === '"' || text[i] === '`') bail()
      toks.push({ t: T.Word, v, k: v.toLowerCase(), s, e: i })
      continue
    }
    if (isDigit(c)) {
      while (i < n && isDigit(text.charCodeAt(i))) i++
      if (text[i] === '.' && isDigit(text.charCodeAt(i + 1))) {
        i++
        while (i < n && isDigit(text.charCodeAt(i))) i++
      }
      const v = text.slice(s, i)
      // exponents, hex, octal, `1.`, `1.x`, `1.2.3`: left to PostHog's parser
      if (i < n && (isWordStart(text.charCodeAt(i)) || text[i] === '.')) bail()
      if (v.length > 1 && v[0] === '0' && v[1] !== '.') bail()
      if (v.replace('.', '').length > 15) bail() // beyond a double's exact digits
      toks.push({ t: T.Num, v, k: v, s, e: i })
      continue
    }
    if (c === 39 || c === 96 || c === 34) {
      const q = text[i]!
      i++
      for (;;) {
        if (i >= n) bail()
        const ch = text[i]
        if (ch === '\n' || ch === '\r') bail()
        if (ch === '\\') i += 2
        else if (ch === q) {
          if (text[i + 1] === q) i += 2
          else break
        } else i++
      }
      i++
      const raw = text.slice(s, i)
      const v = decodeQuoted(raw, q)
      toks.push({ t: q === "'" ? T.Str : T.Quoted, v, k: v, s, e: i })
      continue
    }
    let op = ''
    const three = text.slice(i, i + 3)
    const two = text.slice(i, i + 2)
    if (OPS3.includes(three)) op = three
    else if (OPS2.includes(two)) op = two
    else if (OPS1.includes(text[i]!)) op = text[i]!
    else bail()
    i += op.length
    toks.push({ t: T.Op, v: op, k: op, s, e: i })
  }
  toks.push({ t: T.End, v: '', k: '', s: n, e: n })
  return toks
}

// An expression and the span of the text it was parsed from: parentheses leave the node's own
// span alone but widen the span its parent node is given (as PostHog's parser does).
interface Ex {
  n: Node
  s: number
  e: number
}

const COMPARE: Record<string, string> = {
  '=': '==',
  '==': '==',
  '!=': '!=',
  '<>': '!=',
  '<': '<',
  '<=': '<=',
  '>': '>',
  '>=': '>=',
  '~': '=~',
  '=~': '=~',
  '~*': '=~*',
  '=~*': '=~*',
  '!~': '!~',
  '!~*': '!~*',
}

// Precedence levels (higher binds tighter), in PostHog's grammar's order.
const P_OR = 1
const P_AND = 2
const P_NOT = 3
const P_BETWEEN = 4
const P_ISNULL = 5
const P_COMPARE = 6
const P_ADD = 7
const P_MUL = 8

// PostHog's parser exhausts its stack somewhere past 300 chained operators (fewer inside a larger
// statement); these bounds keep well inside what it accepts.
const MAX_NESTING = 32
const MAX_OPERATORS = 150

class FastParser {
  private i = 0
  private level = 0
  private operators = 0
  private readonly toks: Tok[]
  private readonly lineStarts: number[] = [0]

  constructor(
    private readonly text: string,
    private readonly isIdentifier: IsIdentifier,
  ) {
    this.toks = lex(text)
    for (let j = 0; j < text.length; j++) if (text.charCodeAt(j) === 10) this.lineStarts.push(j + 1)
  }

  private pos(offset: number): Pos {
    const ls = this.lineStarts
    let lo = 0
    let hi = ls.length - 1
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1
      if (ls[mid]! <= offset) lo = mid
      else hi = mid - 1
    }
    return { line: lo + 1, column: offset - ls[lo]!, offset }
  }

  private node(kind: string, s: number, e: number, fields: Record<string, unknown>): Node {
    return { node: kind, ...fields, start: this.pos(s), end: this.pos(e) }
  }

  private get tok(): Tok {
    return this.toks[this.i]!
  }
  private peek(k = 1): Tok {
    return this.toks[Math.min(this.i + k, this.toks.length - 1)]!
  }
  private isOp(v: string, t: Tok = this.tok): boolean {
    return t.t === T.Op && t.v === v
  }
  private isKw(k: string, t: Tok = this.tok): boolean {
    return t.t === T.Word && t.k === k
  }
  private expectOp(v: string): Tok {
    if (!this.isOp(v)) bail()
    return this.toks[this.i++]!
  }
  private expectKw(k: string): Tok {
    if (!this.isKw(k)) bail()
    return this.toks[this.i++]!
  }
  private get lastEnd(): number {
    return this.toks[this.i - 1]!.e
  }

  statement(): QueryNode {
    const q = this.select()
    if (this.tok.t !== T.End) bail()
    return q
  }

  private select(): QueryNode {
    const start = this.tok.s
    const ctes = this.isKw('with') ? this.withClause() : null
    this.expectKw('select')
    let distinct: boolean | null = null
    if (this.isKw('distinct')) {
      this.i++
      if (this.isKw('on')) bail()
      distinct = true
    }
    const select: Node[] = []
    for (;;) {
      select.push(this.selectItem())
      if (!this.isOp(',')) break
      this.i++
      if (this.isKw('from')) break // a trailing comma, which PostHog's parser allows
    }
    let selectFrom: Node | null = null
    if (this.isKw('from')) {
      this.i++
      selectFrom = this.joins()
    }
    let where: Node | null = null
    if (this.isKw('where')) {
      this.i++
      where = this.expr(0).n
    }
    let groupBy: Node[] | null = null
    if (this.isKw('group')) {
      this.i++
      this.expectKw('by')
      groupBy = this.exprList()
    }
    let having: Node | null = null
    if (this.isKw('having')) {
      this.i++
      having = this.expr(0).n
    }
    const q: Node = {
      node: 'SelectQuery',
      ctes,
      distinct,
      select,
      select_from: selectFrom,
      where,
      prewhere: null,
      group_by: groupBy,
      having,
      qualify: null,
    }
    if (this.isKw('order')) {
      this.i++
      this.expectKw('by')
      const order: Node[] = []
      do {
        if (order.length) this.i++
        order.push(this.orderExpr())
      } while (this.isOp(','))
      q.order_by = order
    }
    if (this.isKw('limit')) {
      this.i++
      q.limit = this.expr(0).n
    }
    q.start = this.pos(start)
    q.end = this.pos(this.lastEnd)
    return q as QueryNode
  }

  private selectItem(): Node {
    if (this.isOp('*')) {
      const t = this.toks[this.i++]!
      return this.node('Field', t.s, t.e, { chain: ['*'] })
    }
    const ex = this.expr(0)
    let alias: string | undefined
    if (this.isKw('as')) {
      this.i++
      alias = this.name(true)
    } else if (this.plain(this.tok)) {
      alias = this.name(false)
    }
    if (alias === undefined) return ex.n
    return this.node('Alias', ex.s, this.lastEnd, { alias, expr: ex.n })
  }

  /** An alias or table name: any identifier after AS, a non-keyword one otherwise. */
  private name(keywordOk: boolean): string {
    const t = this.tok
    if (RESERVED_ALIASES.has(t.v.toLowerCase())) bail()
    if (t.t === T.Quoted) {
      this.i++
      return t.v
    }
    if (!this.plain(t) && !(keywordOk && KEYWORD_FIELDS.has(t.k))) bail()
    this.i++
    return t.v
  }

  /** Whether `t` is an IDENTIFIER token for PostHog's lexer (a quoted name, or a word it does not reserve). */
  private plain(t: Tok): boolean {
    if (t.t === T.Quoted) return true
    if (t.t !== T.Word || KEYWORDS.has(t.k) || CONSTANT_WORDS.has(t.k)) return false
    return !/^[a-z]+$/.test(t.k) || this.isIdentifier(t.k)
  }

  /** `WITH name AS (subquery), expr AS name, ...` */
  private withClause(): Node[] {
    this.i++
    const ctes: Node[] = []
    do {
      if (ctes.length) this.i++
      const t = this.tok
      if (t.t === T.Word && this.plain(t) && this.isKw('as', this.peek()) && this.isOp('(', this.peek(2))) {
        const name = this.name(false)
        this.i += 2
        if (!this.isKw('select') && !this.isKw('with')) bail()
        const expr = this.select()
        const e = this.expectOp(')').e
        ctes.push(
          this.node('CTE', t.s, e, {
            name,
            expr,
            cte_type: 'subquery',
            columns: null,
            materialized: null,
            using_key: null,
          }),
        )
      } else {
        const ex = this.expr(0)
        this.expectKw('as')
        const name = this.name(false)
        ctes.push(this.node('CTE', ex.s, this.lastEnd, { name, expr: ex.n, cte_type: 'column' }))
      }
    } while (this.isOp(','))
    return ctes
  }

  /** A FROM clause: a table and the ones joined to it, as PostHog's chain of JoinExpr nodes. */
  private joins(): Node {
    const first = this.table()
    let last = first
    for (;;) {
      const words: string[] = []
      while (this.tok.t === T.Word && ['inner', 'left', 'right', 'full', 'outer'].includes(this.tok.k)) {
        words.push(this.tok.k)
        this.i++
      }
      if (!this.isKw('join')) {
        if (words.length) bail()
        return first
      }
      this.i++
      // only the spellings checked against PostHog's parser (which orders and names the others its own way)
      const type = words.join(' ')
      if (!['', 'inner', 'left', 'right', 'full', 'left outer', 'right outer', 'full outer'].includes(type))
        bail()
      const next = this.table()
      const on = this.expectKw('on').s
      const expr = this.expr(0)
      next.join_type = type ? `${type.toUpperCase()} JOIN` : 'JOIN'
      next.constraint = this.node('JoinConstraint', on, expr.e, { expr: expr.n, constraint_type: 'ON' })
      last.next_join = next
      last = next
    }
  }

  private table(): Node {
    const first = this.tok
    let table: Node
    if (this.isOp('{')) {
      table = this.placeholder().n
    } else if (this.isOp('(')) {
      table = this.subquery().n
    } else {
      const chain = [this.name(false)]
      if (this.isOp('.')) {
        this.i++
        chain.push(this.name(false))
      }
      if (this.isOp('.') || this.isOp('(')) bail()
      table = this.node('Field', first.s, this.lastEnd, { chain })
    }
    const fields: Record<string, unknown> = {
      table,
      alias: null,
      next_join: null,
      sample: null,
      table_final: null,
    }
    if (this.isKw('as')) {
      this.i++
      fields.alias = this.name(true)
      fields.column_aliases = null
    } else if (this.plain(this.tok)) {
      fields.alias = this.name(false)
      fields.column_aliases = null
    }
    return this.node('JoinExpr', first.s, this.lastEnd, fields)
  }

  private orderExpr(): Node {
    const ex = this.expr(0)
    let order = 'ASC'
    const k = this.tok.t === T.Word ? this.tok.k : ''
    if (k === 'asc' || k === 'ascending') this.i++
    else if (k === 'desc' || k === 'descending') {
      order = 'DESC'
      this.i++
    }
    if (this.isKw('nulls')) {
      this.i++
      if (!this.isKw('first') && !this.isKw('last')) bail()
      this.i++
    }
    return this.node('OrderExpr', ex.s, this.lastEnd, { expr: ex.n, order })
  }

  private exprList(): Node[] {
    const out = [this.expr(0).n]
    while (this.isOp(',')) {
      this.i++
      out.push(this.expr(0).n)
    }
    return out
  }

  // Precedence climbing, as ANTLR resolves PostHog's left-recursive columnExpr.
  private expr(min: number): Ex {
    // Deep nesting and long operator chains are left to PostHog's parser, which refuses them past
    // its own limits: what this parser accepts, that one accepts too (and the resolver copes with).
    if (++this.level > MAX_NESTING) bail()
    const ex = this.climb(min)
    this.level--
    return ex
  }

  private climb(min: number): Ex {
    let left = this.prefix(min)
    for (;;) {
      const t = this.tok
      if (t.t === T.Op) {
        const v = t.v
        let prec: number
        if (v === '*' || v === '/' || v === '%') prec = P_MUL
        else if (v === '+' || v === '-') prec = P_ADD
        else if (COMPARE[v]) prec = P_COMPARE
        else return left
        if (prec < min) return left
        this.i++
        const right = this.expr(prec + 1)
        const kind = prec === P_COMPARE ? 'CompareOperation' : 'ArithmeticOperation'
        const op = prec === P_COMPARE ? COMPARE[v] : v
        if (++this.operators > MAX_OPERATORS) bail()
        left = {
          n: this.node(kind, left.s, right.e, { left: left.n, right: right.n, op }),
          s: left.s,
          e: right.e,
        }
        continue
      }
      if (t.t !== T.Word) return left
      const k = t.k
      if (k === 'and' || k === 'or') {
        const prec = k === 'and' ? P_AND : P_OR
        if (prec < min) return left
        this.i++
        const right = this.expr(prec + 1)
        const kind = k === 'and' ? 'And' : 'Or'
        // PostHog's visitor merges nested ANDs (ORs) into one, parenthesised or not
        const exprs = [
          ...(left.n.node === kind ? left.n.exprs : [left.n]),
          ...(right.n.node === kind ? right.n.exprs : [right.n]),
        ]
        if (++this.operators > MAX_OPERATORS) bail()
        left = { n: this.node(kind, left.s, right.e, { exprs }), s: left.s, e: right.e }
        continue
      }
      let negated = false
      let word = k
      if (k === 'not') {
        const next = this.peek()
        if (next.t !== T.Word) bail()
        negated = true
        word = next.k
      }
      if (word === 'in' || word === 'like' || word === 'ilike') {
        if (P_COMPARE < min) return left
        this.i += negated ? 2 : 1
        if (this.isKw('cohort')) bail()
        const right = this.expr(P_COMPARE + 1)
        const op = (negated ? 'not ' : '') + word
        if (++this.operators > MAX_OPERATORS) bail()
        left = {
          n: this.node('CompareOperation', left.s, right.e, { left: left.n, right: right.n, op }),
          s: left.s,
          e: right.e,
        }
        continue
      }
      if (word === 'between') {
        if (P_BETWEEN < min) return left
        this.i += negated ? 2 : 1
        const low = this.expr(P_BETWEEN + 1)
        this.expectKw('and')
        const high = this.expr(P_BETWEEN + 1)
        if (++this.operators > MAX_OPERATORS) bail()
        left = {
          n: this.node('BetweenExpr', left.s, high.e, { expr: left.n, low: low.n, high: high.n, negated }),
          s: left.s,
          e: high.e,
        }
        continue
      }
      if (negated) bail()
      if (k === 'is') {
        if (P_ISNULL < min) return left
        this.i++
        let op = '=='
        if (this.isKw('not')) {
          this.i++
          op = '!='
        }
        const end = this.expectKw('null').e
        if (++this.operators > MAX_OPERATORS) bail()
        left = {
          n: this.node('CompareOperation', left.s, end, {
            left: left.n,
            right: { node: 'Constant', value: null },
            op,
            is_null_comparison_style: true,
          }),
          s: left.s,
          e: end,
        }
        continue
      }
      return left
    }
  }

  private prefix(min: number): Ex {
    const t = this.tok
    if (this.isKw('not')) {
      // NOT inside a tighter operand, and not(x) (a call to PostHog's parser): left to it
      if (min > P_NOT || this.isOp('(', this.peek())) bail()
      this.i++
      const operand = this.expr(P_NOT)
      return { n: this.node('Not', t.s, operand.e, { expr: operand.n }), s: t.s, e: operand.e }
    }
    if (this.isOp('-')) {
      this.i++
      const next = this.tok
      if (next.t === T.Num) {
        this.i++
        const value = -Number(next.v)
        if (value === 0 || this.isOp('[') || this.isOp('(')) bail()
        const n = this.node('Constant', t.s, next.e, { value })
        return { n, s: t.s, e: next.e }
      }
      const operand = this.postfix(this.primary())
      const n = this.node('ArithmeticOperation', t.s, operand.e, {
        left: { node: 'Constant', value: 0 },
        right: operand.n,
        op: '-',
      })
      return { n, s: t.s, e: operand.e }
    }
    return this.postfix(this.primary())
  }

  private postfix(ex: Ex): Ex {
    while (this.isOp('[')) {
      if (ex.n.node === 'Constant' || ++this.operators > MAX_OPERATORS) bail()
      this.i++
      const prop = this.expr(0)
      const end = this.expectOp(']').e
      ex = { n: this.node('ArrayAccess', ex.s, end, { array: ex.n, property: prop.n }), s: ex.s, e: end }
    }
    if (this.isOp('.') || this.isOp('(') || this.isOp('?.') || this.isOp('::')) bail()
    return ex
  }

  private placeholder(): Ex {
    const s = this.expectOp('{').s
    if (this.isOp('}')) bail()
    const inner = this.expr(0)
    const e = this.expectOp('}').e
    return { n: this.node('Placeholder', s, e, { expr: inner.n }), s, e }
  }

  private primary(): Ex {
    const t = this.tok
    switch (t.t) {
      case T.Num: {
        this.i++
        return { n: this.node('Constant', t.s, t.e, { value: Number(t.v) }), s: t.s, e: t.e }
      }
      case T.Str: {
        this.i++
        return { n: this.node('Constant', t.s, t.e, { value: t.v }), s: t.s, e: t.e }
      }
      case T.Quoted:
        return this.field()
      case T.Word: {
        if (CONSTANT_WORDS.has(t.k)) {
          if (t.k !== 'true' && t.k !== 'false' && t.k !== 'null') bail()
          this.i++
          const value = t.k === 'null' ? null : t.k === 'true'
          return { n: this.node('Constant', t.s, t.e, { value }), s: t.s, e: t.e }
        }
        const next = this.peek()
        if (this.isOp('(', next)) {
          if (!this.plain(t) && !KEYWORD_CALLS.has(t.k)) bail()
          return this.call()
        }
        if (!this.plain(t) && !KEYWORD_FIELDS.has(t.k)) bail()
        if (next.t === T.Str) bail()
        return this.field()
      }
      case T.Op: {
        if (t.v === '(') return this.parens()
        if (t.v === '[') {
          this.i++
          const exprs = this.listUntil(']', true)
          const e = this.expectOp(']').e
          return { n: this.node('Array', t.s, e, { exprs }), s: t.s, e }
        }
        if (t.v === '{') return this.placeholder()
        return bail()
      }
      default:
        return bail()
    }
  }

  /** Comma-separated expressions up to `close` (not consumed); a trailing comma is allowed. */
  private listUntil(close: string, emptyOk: boolean): Node[] {
    const out: Node[] = []
    if (this.isOp(close)) {
      if (!emptyOk) bail()
      return out
    }
    for (;;) {
      out.push(this.expr(0).n)
      if (!this.isOp(',')) break
      this.i++
      if (this.isOp(close)) break
    }
    return out
  }

  private parens(): Ex {
    const s = this.expectOp('(').s
    if (this.isKw('select') || this.isKw('with')) {
      this.i--
      return this.subquery()
    }
    if (this.isOp(')')) bail()
    const first = this.expr(0)
    if (this.isOp(')')) {
      const e = this.toks[this.i++]!.e
      return { n: first.n, s, e }
    }
    this.expectOp(',')
    const exprs = [first.n]
    if (!this.isOp(')')) exprs.push(...this.listUntil(')', false))
    const e = this.expectOp(')').e
    return { n: this.node('Tuple', s, e, { exprs }), s, e }
  }

  /** `(SELECT ...)` */
  private subquery(): Ex {
    const s = this.expectOp('(').s
    if (!this.isKw('select') && !this.isKw('with')) bail()
    const n = this.select()
    const e = this.expectOp(')').e
    return { n, s, e }
  }

  private field(): Ex {
    const first = this.tok
    this.i++
    const chain: string[] = [first.v]
    while (this.isOp('.')) {
      const part = this.peek()
      if (part.t === T.Quoted) chain.push(part.v)
      else if (this.plain(part) || (part.t === T.Word && KEYWORD_FIELDS.has(part.k))) chain.push(part.v)
      else bail()
      this.i += 2
    }
    const e = this.lastEnd
    return { n: this.node('Field', first.s, e, { chain }), s: first.s, e }
  }

  private call(): Ex {
    const nameTok = this.toks[this.i++]!
    this.expectOp('(')
    let args = this.callArgs()
    let params: Node[] | null = null
    if (this.isOp('(')) {
      if (args.distinct) bail()
      this.i++
      params = args.list
      args = this.callArgs()
    }
    const distinct = args.distinct
    if (this.isKw('over')) bail()
    const e = this.lastEnd
    const n = this.node('Call', nameTok.s, e, {
      name: nameTok.v,
      args: args.list,
      params,
      distinct,
      order_by: null,
      filter_expr: null,
    })
    return { n, s: nameTok.s, e }
  }

  /** The arguments after an opening parenthesis, through the closing one. */
  private callArgs(): { list: Node[]; distinct: boolean } {
    let distinct = false
    if (this.isKw('distinct')) {
      this.i++
      distinct = true
      if (this.isOp(')')) bail()
    }
    let list: Node[]
    if (this.isOp('*') && this.isOp(')', this.peek()) && !distinct) {
      const t = this.toks[this.i++]!
      list = [this.node('Field', t.s, t.e, { chain: ['*'] })]
    } else list = this.listUntil(')', true)
    this.expectOp(')')
    return { list, distinct }
  }
}

/** PostHog's parser's tree for `text`, or FAST_PARSE_UNSUPPORTED (thrown) when `text` is outside the subset. */
export function fastParseSelect(text: string, isIdentifier: IsIdentifier): QueryNode {
  return new FastParser(text, isIdentifier).statement()
}

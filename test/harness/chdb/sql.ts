// Just enough of a ClickHouse SQL lexer for the HTTP front of the chdb test server: what kind of
// statement a request holds, whether it holds more than one, its FORMAT clause, and the two rewrites
// that give system.processes and KILL QUERY the HTTP query_id.

export type TokenType = 'ws' | 'comment' | 'string' | 'quoted' | 'word' | 'punct'

export interface Token {
  type: TokenType
  text: string
  start: number
}

const WORD = /[A-Za-z0-9_$\x80-\uffff]/

/** Lazily splits SQL into tokens; unterminated strings and comments run to the end. */
export function* tokens(sql: string): Generator<Token> {
  let i = 0
  const n = sql.length
  while (i < n) {
    const start = i
    const c = sql[i]!
    const next = sql[i + 1]
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f' || c === '\v') {
      while (i < n && /\s/.test(sql[i]!)) i++
      yield { type: 'ws', text: sql.slice(start, i), start }
    } else if ((c === '-' && next === '-') || c === '#') {
      while (i < n && sql[i] !== '\n') i++
      yield { type: 'comment', text: sql.slice(start, i), start }
    } else if (c === '/' && next === '*') {
      // ClickHouse block comments nest.
      let depth = 0
      while (i < n) {
        if (sql[i] === '/' && sql[i + 1] === '*') {
          depth++
          i += 2
        } else if (sql[i] === '*' && sql[i + 1] === '/') {
          depth--
          i += 2
          if (depth === 0) break
        } else i++
      }
      yield { type: 'comment', text: sql.slice(start, i), start }
    } else if (c === "'" || c === '"' || c === '`') {
      i++
      while (i < n) {
        if (sql[i] === '\\') i += 2
        else if (sql[i] === c) {
          if (sql[i + 1] === c) i += 2
          else {
            i++
            break
          }
        } else i++
      }
      yield { type: c === "'" ? 'string' : 'quoted', text: sql.slice(start, i), start }
    } else if (c === '$' && /^\$[A-Za-z0-9_]*\$/.test(sql.slice(i, i + 64))) {
      // heredoc string: $tag$ ... $tag$
      const tag = /^\$[A-Za-z0-9_]*\$/.exec(sql.slice(i, i + 64))![0]
      const end = sql.indexOf(tag, i + tag.length)
      i = end < 0 ? n : end + tag.length
      yield { type: 'string', text: sql.slice(start, i), start }
    } else if (WORD.test(c)) {
      while (i < n && WORD.test(sql[i]!)) i++
      yield { type: 'word', text: sql.slice(start, i), start }
    } else {
      i++
      yield { type: 'punct', text: c, start }
    }
  }
}

const isCode = (t: Token) => t.type !== 'ws' && t.type !== 'comment'

/** The first `count` words/punctuation of the statement, keywords upper-cased. */
export function leadingWords(sql: string, count = 2): string[] {
  const out: string[] = []
  for (const t of tokens(sql)) {
    if (!isCode(t)) continue
    out.push(t.type === 'word' ? t.text.toUpperCase() : t.text)
    if (out.length >= count) break
  }
  return out
}

export function isInsert(sql: string): boolean {
  return leadingWords(sql, 1)[0] === 'INSERT'
}

/**
 * Position of a `;` followed by another statement, or -1. The real HTTP interface refuses
 * multi-statements; embedded ClickHouse would run them all. Not called on INSERTs (inline data).
 */
export function secondStatementAt(sql: string): number {
  let semicolon = -1
  for (const t of tokens(sql)) {
    if (!isCode(t)) continue
    if (t.type === 'punct' && t.text === ';') {
      if (semicolon < 0) semicolon = t.start
      continue
    }
    if (semicolon >= 0) return t.start
  }
  return -1
}

/** The name in a trailing `FORMAT <name>` clause (optionally followed by SETTINGS or `;`), if any. */
export function explicitFormat(sql: string): string | undefined {
  const code: Token[] = []
  for (const t of tokens(sql)) if (isCode(t)) code.push(t)
  for (let i = code.length - 2; i >= 0; i--) {
    const t = code[i]!
    if (t.type !== 'word' || t.text.toUpperCase() !== 'FORMAT') continue
    const name = code[i + 1]!
    const after = code[i + 2]
    if (name.type !== 'word' && name.type !== 'quoted') return undefined
    if (after && !(after.type === 'punct' && after.text === ';') && after.text.toUpperCase() !== 'SETTINGS')
      return undefined
    return name.type === 'quoted' ? name.text.slice(1, -1) : name.text
  }
  return undefined
}

/**
 * chdb gives every query its own id; the server stores the HTTP query_id in the query's
 * log_comment setting as `burrow_query_id=<id>` and maps it back with this expression.
 */
export const QUERY_ID_MARK = 'burrow_query_id='
export const MAPPED_QUERY_ID = `if(startsWith(Settings['log_comment'], '${QUERY_ID_MARK}'), substring(Settings['log_comment'], ${
  QUERY_ID_MARK.length + 1
}), query_id)`
const PROCESSES = `(SELECT * REPLACE (${MAPPED_QUERY_ID} AS query_id, ${MAPPED_QUERY_ID.replace(
  /query_id\)$/,
  'initial_query_id)',
)} AS initial_query_id) FROM system.processes)`

const unquote = (t: Token) => (t.type === 'quoted' ? t.text.slice(1, -1) : t.text).toLowerCase()

/** `system.processes` as a subquery whose query_id (and initial_query_id) are the HTTP ids. */
export function rewriteProcesses(sql: string): string {
  const all = [...tokens(sql)]
  const parts: string[] = []
  let last = 0
  for (let i = 0; i + 2 < all.length; i++) {
    const [a, dot, b] = [all[i]!, all[i + 1]!, all[i + 2]!]
    if (
      (a.type === 'word' || a.type === 'quoted') &&
      unquote(a) === 'system' &&
      dot.text === '.' &&
      (b.type === 'word' || b.type === 'quoted') &&
      unquote(b) === 'processes'
    ) {
      parts.push(sql.slice(last, a.start), PROCESSES)
      last = b.start + b.text.length
      i += 2
    }
  }
  if (!parts.length) return sql
  parts.push(sql.slice(last))
  return parts.join('')
}

/** `KILL QUERY WHERE query_id = …`: every bare `query_id` becomes the mapped id. */
export function rewriteKillQuery(sql: string): string {
  const parts: string[] = []
  let last = 0
  for (const t of tokens(sql)) {
    if ((t.type === 'word' && t.text === 'query_id') || (t.type === 'quoted' && t.text === '`query_id`')) {
      parts.push(sql.slice(last, t.start), `(${MAPPED_QUERY_ID})`)
      last = t.start + t.text.length
    }
  }
  if (!parts.length) return sql
  parts.push(sql.slice(last))
  return parts.join('')
}

/** Mentions system.processes somewhere (cheap pre-check before rewriting). */
export const mentionsProcesses = (sql: string) => /processes/i.test(sql)

/** A ClickHouse single-quoted string literal. */
export const literal = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`

/** A backquoted identifier. */
export const ident = (s: string) => `\`${s.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``

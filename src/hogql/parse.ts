import type { HogQLParser } from '@posthog/hogql-parser'
import { LRUCache } from 'lru-cache'
import { createRequire } from 'node:module'
import type { Node, QueryNode } from './ast.ts'
import { HogQLError } from './errors.ts'
import { fastParseSelect, type IsIdentifier } from './fast-parse.ts'

// The package's CommonJS build, required rather than imported: its ES module build (the same parser)
// goes through tsx's loader, which keeps ~200 MB per thread that imports it (each compile worker,
// the main thread, the projector process) against ~4 MB for this one (docs/performance.md).
const createHogQLParser = createRequire(import.meta.url)(
  '@posthog/hogql-parser',
) as () => Promise<HogQLParser>

// The WebAssembly module takes a moment to instantiate; one instance serves the whole process.
let parserPromise: Promise<HogQLParser> | undefined

/** The process's parser instance (created on first use, recreated after a crash). */
export function getParser(): Promise<HogQLParser> {
  parserPromise ??= createHogQLParser()
  return parserPromise
}

function check(json: string): Node {
  const out = JSON.parse(json) as Node & { error?: boolean; message?: string; type?: string }
  if (out.error) {
    const message = String(out.message ?? 'could not parse the query')
    // The parser reports SETTINGS as "not implemented"; for us it is a policy refusal.
    if (out.type === 'NotImplementedError' && /settingsClause/i.test(message)) {
      throw new HogQLError('settings_not_allowed', 'SETTINGS are not allowed in queries')
    }
    const code = out.type === 'NotImplementedError' ? 'not_supported' : 'syntax_error'
    const start = out.start?.offset
    const end = out.end?.offset
    // The parser gives 0..0 when it has no position; leave the span out rather than point at the start.
    const spanOk = start !== undefined && end !== undefined && (start !== 0 || end !== 0)
    throw new HogQLError(code, message, spanOk ? { start, end } : undefined)
  }
  return out
}

// Deep nesting or a long operator chain (a few hundred `1 + 1 + …`) exhausts the WebAssembly stack,
// and the instance fails every later call: drop it (getParser makes a new one) and refuse the query.
function guarded(parse: () => string): Node {
  let json: string
  try {
    json = parse()
  } catch (err) {
    if (!(err instanceof WebAssembly.RuntimeError)) throw err
    parserPromise = undefined
    throw new HogQLError(
      'not_supported',
      'The query is nested too deeply (or chains too many operators) to parse.',
    )
  }
  return check(json)
}

// Trees by statement text. The compile cache (src/queries/compile-cache.ts) answers a text compiled
// the same way again; this one answers the same text compiled for another team, timezone or set of
// values, which matters for the statements the fast parser leaves to PostHog's (several ms each).
// The resolver only reads the tree (fast-parse.test.ts checks a cached tree is unchanged after
// compiling), so entries are shared, not copied.
// A tree takes some tens of bytes per character of its text: sizes are counted in text, kept small,
// and long statements (which the fast parser mostly takes anyway) are not kept.
const trees = new LRUCache<string, QueryNode>({
  max: 500,
  maxSize: 1024 * 1024,
  maxEntrySize: 16 * 1024,
  sizeCalculation: (_tree, text) => text.length + 1,
})

// Which words of letters PostHog's lexer reads as plain names (not keywords), asked of its parser
// once per word: `select w, 1 w` is a column and an alias only for a plain name. Words of queries
// (columns, tables, functions, aliases) are few; the map is bounded all the same.
const identifierWords = new Map<string, boolean>()
const MAX_IDENTIFIER_WORDS = 10_000

/** The fast parser's IsIdentifier oracle, answered by PostHog's parser `parser`. */
export function identifierOracle(parser: HogQLParser): IsIdentifier {
  return (word) => {
    let plain = identifierWords.get(word)
    if (plain === undefined) {
      const out = JSON.parse(parser.parseSelect(`select ${word}, 1 ${word}`)) as Node
      const [field, alias] = (out.select ?? []) as Node[]
      plain =
        out.node === 'SelectQuery' &&
        field?.node === 'Field' &&
        field.chain?.length === 1 &&
        field.chain[0] === word &&
        alias?.node === 'Alias' &&
        alias.alias === word
      if (identifierWords.size < MAX_IDENTIFIER_WORDS) identifierWords.set(word, plain)
    }
    return plain
  }
}

/** The tree cached for `text`, if any (tests). */
export function cachedTree(text: string): QueryNode | undefined {
  return trees.get(text)
}

/**
 * Parses a statement: with the fast parser (src/hogql/fast-parse.ts) when the statement is in its
 * subset, else with PostHog's parser, which alone reports errors. HogQLError on a syntax error or
 * one nested too deeply.
 */
export function parseSelect(parser: HogQLParser, query: string): QueryNode {
  let tree = trees.get(query)
  if (tree) return tree
  try {
    tree = fastParseSelect(query, identifierOracle(parser))
  } catch {
    // outside the fast parser's subset (or too deep for its recursion): PostHog's parser decides
    tree = guarded(() => parser.parseSelect(query)) as QueryNode
  }
  trees.set(query, tree)
  return tree
}

/** Parses a statement with PostHog's parser only (tests and the benchmark compare the two). */
export function parseSelectWasm(parser: HogQLParser, query: string): QueryNode {
  return guarded(() => parser.parseSelect(query)) as QueryNode
}

/** Parses one of the schema's internal expressions. */
export function parseExpr(parser: HogQLParser, expr: string): Node {
  // The fast parser first, as `SELECT <expr>`: PostHog's parser takes seconds over the longer
  // schema expressions (the channel-type rules, src/sessions/channel-type.ts).
  try {
    const tree = fastParseSelect(`SELECT ${expr}`, identifierOracle(parser)) as Node & { select?: Node[] }
    if (
      tree.node === 'SelectQuery' &&
      tree.select?.length === 1 &&
      Object.keys(tree).every(selectOnly(tree))
    ) {
      return withoutPositions(tree.select[0]!)
    }
  } catch {
    // outside the fast parser's subset: PostHog's parser decides
  }
  // Internal expressions (schema definitions) carry no positions: errors in them are ours, not the user's.
  return guarded(() => parser.parseExpr(expr, true))
}

// Whether a key of the SELECT the fast parser made is one `SELECT <expr>` alone sets.
const selectOnly = (tree: Record<string, unknown>) => (k: string) =>
  ['node', 'select', 'start', 'end'].includes(k) ||
  tree[k] === null ||
  tree[k] === undefined ||
  tree[k] === false

function withoutPositions(n: Node): Node {
  const strip = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(strip)
    if (!v || typeof v !== 'object') return v
    return Object.fromEntries(
      Object.entries(v)
        .filter(([k]) => k !== 'start' && k !== 'end')
        .map(([k, x]) => [k, strip(x)]),
    )
  }
  return strip(n) as Node
}

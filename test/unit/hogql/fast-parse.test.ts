// The fast parser against PostHog's (WebAssembly) parser, the oracle: on every statement of the test
// corpus and on thousands of mutated and generated ones, the fast parser either bails out or gives
// exactly PostHog's tree. It must also really take the common insight statements.
import type { HogQLParser } from '@posthog/hogql-parser'
import { beforeAll, describe, expect, it } from 'vitest'
import { FAST_PARSE_UNSUPPORTED, fastParseSelect } from '../../../src/hogql/fast-parse.ts'
import { compileHogQL } from '../../../src/hogql/index.ts'
import { cachedTree, getParser, identifierOracle } from '../../../src/hogql/parse.ts'
import {
  EVERYWHERE_AGGREGATES,
  EVERYWHERE_SAMPLES,
  NEWER_AGGREGATES,
  NEWER_CONVERSIONS,
  NEWER_SAMPLES,
  NEWER_TIME,
} from '../../integration/hogql/function-samples.ts'
import { BETWEEN, NULL_EQUALITY, nullEqualityForms } from '../../integration/hogql/null-equality.cases.ts'
import {
  POSTHOG_DOCS_CASES,
  POSTHOG_PRINTER_CASES,
  POSTHOG_QUERY_CASES,
  POSTHOG_RESOLVER_CASES,
  POSTHOG_SCHEMA_CASES,
} from '../../integration/hogql/posthog-query.cases.ts'
import { PRINTER_CASES } from './printer-cases.ts'

const RANGE = "timestamp >= '2026-10-25 00:00:00' AND timestamp < '2026-11-24 00:00:00'"
/** Insight-sized statements (bench/query.ts, the insights' HogQL) that must take the fast path. */
const TYPICAL = [
  `SELECT event, count() AS c FROM events WHERE ${RANGE} GROUP BY event ORDER BY c DESC, event`,
  `SELECT toStartOfDay(timestamp) AS day, count(DISTINCT person_id) AS persons FROM events
        WHERE event = '$pageview' AND ${RANGE} GROUP BY day ORDER BY day`,
  `SELECT properties.$os AS os, count() AS c FROM events
        WHERE event = '$pageview' AND properties.$browser = 'Safari' AND ${RANGE} GROUP BY os ORDER BY os`,
  `SELECT person.properties.plan AS plan, count() AS c FROM events WHERE ${RANGE} GROUP BY plan ORDER BY plan`,
  `SELECT properties.$current_url AS url, count() AS views FROM events
        WHERE event = '$pageview' AND ${RANGE} GROUP BY url ORDER BY views DESC LIMIT 10`,
  `select event, timestamp, distinct_id from events order by timestamp desc limit 10`,
  `SELECT count() FROM events WHERE event IN ('a', 'b') AND properties.amount > 10.5 AND properties.x IS NOT NULL`,
]

const corpus: string[] = [
  ...TYPICAL,
  ...[
    ...POSTHOG_QUERY_CASES,
    ...POSTHOG_PRINTER_CASES,
    ...POSTHOG_RESOLVER_CASES,
    ...POSTHOG_SCHEMA_CASES,
    ...POSTHOG_DOCS_CASES,
  ].map((c) => c.hogql),
  ...PRINTER_CASES.map((c) => c.hogql),
  ...NULL_EQUALITY.flatMap(([a, op, b]) => nullEqualityForms(a, op, b)),
  ...BETWEEN.map(([e]) => `select ${e}`),
  ...[
    ...EVERYWHERE_SAMPLES,
    ...EVERYWHERE_AGGREGATES,
    ...NEWER_SAMPLES,
    ...NEWER_CONVERSIONS,
    ...NEWER_TIME,
    ...NEWER_AGGREGATES,
  ].map(([e]) => `select ${e}`),
]

// A fixed seed, so a failure reproduces; FUZZ_SEED and FUZZ_SCALE run other and longer series by hand.
const SEED = Number(process.env.FUZZ_SEED ?? 20261124)
const SCALE = Number(process.env.FUZZ_SCALE ?? 1)
const MUTATIONS = 4000 * SCALE
const GENERATED = 1000 * SCALE

let parser: HogQLParser
beforeAll(async () => {
  parser = await getParser()
})

/** The fast parser's tree, or undefined when it bails out. */
function fast(text: string): unknown {
  try {
    return fastParseSelect(text, identifierOracle(parser))
  } catch (err) {
    if (err === FAST_PARSE_UNSUPPORTED) return undefined
    throw err
  }
}

/** For a text the fast parser takes: its tree and PostHog's (to compare); undefined when it bails. */
function pair(text: string): { mine: unknown; theirs: unknown } | undefined {
  const mine = fast(text)
  if (mine === undefined) return undefined
  return { mine, theirs: JSON.parse(parser.parseSelect(text)) as unknown }
}

// A small deterministic generator (mulberry32), so a failure reproduces.
function rng(seed: number): () => number {
  let a = seed
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

describe('fast parser', () => {
  it('knows a different tree when it sees one (checks the comparison)', () => {
    const p = pair('select a + 1 from t')!
    expect(p.mine).toEqual(p.theirs)
    const other = JSON.parse(parser.parseSelect('select a - 1 from t')) as unknown
    expect(p.mine).not.toEqual(other)
  })

  it('gives PostHog’s tree for every corpus statement it takes', () => {
    let taken = 0
    for (const text of corpus) {
      const p = pair(text)
      if (!p) continue
      taken++
      expect(p.mine, text).toEqual(p.theirs)
    }
    console.log(`fast parser takes ${taken} of ${corpus.length} corpus statements`)
    expect(taken).toBeGreaterThan(0)
  })

  it('takes the typical insight statements', () => {
    for (const text of TYPICAL) expect(fast(text), text).toBeDefined()
  })

  it('bails out on syntax errors and what it leaves to PostHog’s parser', () => {
    for (const text of [
      'select',
      'select 1 from',
      'select a b c',
      'select (1',
      "select 'abc",
      'select x -> x',
      "select f'{x}'",
      'select case when a then 1 end',
      'select 1 from a any left join b on a.x = b.x',
      'select 1 from a join b using x',
      'select 1 from a, b',
      'select 1 settings max_threads = 1',
      'select row_number() over (order by x)',
      'select 1 union all select 2',
      'select x as null',
      'select 1 from t limit 1 offset 2',
      // past what PostHog's parser accepts, which refuses the statement (parse.ts)
      `select ${Array(400).fill('1').join(' + ')}`,
      `select ${'('.repeat(100)}1${')'.repeat(100)}`,
    ])
      expect(fast(text), text).toBeUndefined()
  })

  it('leaves the cached tree as parsed when it compiles a statement', async () => {
    let compiled = 0
    const cases: { hogql: string; timezone?: string; values?: Record<string, unknown>; filters?: string }[] =
      [...PRINTER_CASES, ...POSTHOG_QUERY_CASES, ...POSTHOG_RESOLVER_CASES, ...POSTHOG_DOCS_CASES]
    for (const c of cases) {
      try {
        await compileHogQL(c.hogql, { teamId: 1, timezone: c.timezone, values: c.values, filters: c.filters })
      } catch {
        continue // refused statements are not cached
      }
      compiled++
      expect(cachedTree(c.hogql), c.hogql).toEqual(JSON.parse(parser.parseSelect(c.hogql)))
    }
    expect(compiled).toBeGreaterThan(150)
  }, 60_000)

  it('reads every word in every name position as PostHog’s parser does (keywords or not)', () => {
    // the published grammar's keywords, words the installed parser reserves beyond them, and names
    const words = (
      'all and anti any array as asc ascending asof between both by case cast catch cohort collate cross ' +
      'cube current date day desc descending distinct else end extract final finally first fn following ' +
      'for from full fun group having hour id if ilike in inf infinity inner intersect interval is join ' +
      'key last leading left let like limit minute month nan not null nulls offset on or order outer over ' +
      'partition preceding prewhere quarter range return right rollup row rows sample second select semi ' +
      'settings substring then throw ties timestamp to top totals trailing trim truncate try unbounded ' +
      'union using week when where while window with year yyyy qualify exclude replace except lambda ' +
      'materialized recursive grouping sets values filter within respect ignore natural pivot unpivot ' +
      'interpolate fill step positional local columns include wildcard true false global format into ' +
      'lateral apply groups event events person properties count sum plan team_id Select FROM'
    ).split(' ')
    let compared = 0
    for (const w of words) {
      for (const text of [
        `select ${w} from t`,
        `select 1 ${w} from t`,
        `select 1 as ${w} from t`,
        `select ${w}(1) from t`,
        `select t.${w} from t`,
        `select a from t ${w}`,
        `select a from t as ${w}`,
        `select a from ${w}`,
        `with ${w} as (select 1) select 1 from ${w}`,
      ]) {
        const p = pair(text)
        if (!p) continue
        compared++
        expect(p.mine, text).toEqual(p.theirs)
      }
    }
    expect(compared).toBeGreaterThan(100)
  })

  it(
    'gives PostHog’s tree or bails on thousands of mutated statements',
    () => {
      const next = rng(SEED)
      const pick = <X>(xs: X[]): X => xs[Math.floor(next() * xs.length)]!
      const OPS = [
        '=',
        '==',
        '!=',
        '<>',
        '<',
        '<=',
        '>',
        '>=',
        '+',
        '-',
        '*',
        '/',
        '%',
        'and',
        'or',
        'not',
        'in',
        'like',
        'ilike',
        'is',
        'null',
        'between',
        '(',
        ')',
        ',',
        '.',
        '[',
        ']',
        '{',
        '}',
        '~',
        '=~',
        '!~*',
        'as',
        'AS',
        '--',
        '/* c */',
        "'s'",
        '1',
        '-1',
        '1.5',
        'x',
        'distinct',
        'from',
        'where',
        '`q`',
        '"d"',
      ]
      const sources = corpus.filter((t) => fast(t) !== undefined)
      let compared = 0
      for (let n = 0; n < MUTATIONS; n++) {
        const toks = pick(sources).match(/'(?:[^'\\]|\\.|'')*'|\s+|\w+|\$\w+|[^\s\w]/g) ?? []
        const words = toks.map((t, i) => [t, i] as const).filter(([t]) => t.trim() !== '')
        for (let m = 1 + Math.floor(next() * 3); m > 0; m--) {
          const [, at] = pick(words)
          const r = next()
          if (r < 0.2) toks[at] = ''
          else if (r < 0.35) toks[at] = toks[at] + ' ' + toks[at]
          else if (r < 0.5) {
            const [, other] = pick(words)
            ;[toks[at], toks[other]] = [toks[other]!, toks[at]!]
          } else if (r < 0.75) toks[at] = ' ' + pick(OPS) + ' '
          else if (r < 0.85) toks[at] = toks[at]!.toUpperCase()
          else if (r < 0.95) toks[at] = toks[at] + ' /* x */ '
          else toks[at] = toks[at] + '\n-- c\n'
        }
        const p = pair(toks.join(''))
        if (!p) continue
        compared++
        expect(p.mine, toks.join('')).toEqual(p.theirs)
      }
      console.log(`mutations: ${compared} of ${MUTATIONS} taken by the fast parser, all identical`)
      expect(compared).toBeGreaterThan(500)
    },
    60_000 * SCALE,
  ) // a hang guard: PostHog's parser takes milliseconds a statement on a busy machine

  it(
    'gives PostHog’s tree or bails on thousands of generated expressions',
    () => {
      const next = rng(SEED + 7)
      const pick = <X>(xs: X[]): X => xs[Math.floor(next() * xs.length)]!
      const atoms = [
        'a',
        'b.c',
        '1',
        '-2',
        '0.5',
        "'s'",
        'null',
        'true',
        'f(a)',
        'x[1]',
        '(a)',
        '(1, 2)',
        '[a]',
        '-a',
      ]
      const gen = (depth: number): string => {
        if (depth === 0 || next() < 0.25) return pick(atoms)
        const l = gen(depth - 1)
        const r = gen(depth - 1)
        switch (Math.floor(next() * 12)) {
          case 0:
            return `${l} ${pick(['and', 'AND', 'or', 'Or'])} ${r}`
          case 1:
            return `not ${l}`
          case 2:
            return `${l} ${pick(['=', '!=', '<', '>=', '==', '<>'])} ${r}`
          case 3:
            return `${l} ${pick(['+', '-', '*', '/', '%'])} ${r}`
          case 4:
            return `-${l}`
          case 5:
            return `${l} ${pick(['in', 'not in', 'global in'])} (${r}, ${l})`
          case 6:
            return `${l} ${pick(['between', 'not between'])} ${r} and ${gen(depth - 1)}`
          case 7:
            return `${l} ${pick(['like', 'not like', 'ilike', 'not ilike', '=~', '!~'])} ${r}`
          case 8:
            return `${l} is ${pick(['', 'not '])}null`
          case 9:
            return `(${l})`
          case 10:
            return `g(${l}, ${r})`
          default:
            return `${l} ${pick(['and', 'or'])} (${r})`
        }
      }
      let compared = 0
      for (let n = 0; n < GENERATED; n++) {
        const text = n % 2 ? `select ${gen(3)} from t` : `select x from t where ${gen(4)} order by ${gen(2)}`
        const p = pair(text)
        if (!p) continue
        compared++
        expect(p.mine, text).toEqual(p.theirs)
      }
      console.log(`generated: ${compared} of ${GENERATED} taken by the fast parser, all identical`)
      expect(compared).toBeGreaterThan(500)
    },
    60_000 * SCALE,
  ) // a hang guard: PostHog's parser takes milliseconds a statement on a busy machine
})

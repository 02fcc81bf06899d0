// Function names in any case, as PostHog resolves them: a name PostHog marks case_sensitive=False
// (posthog/hogql/functions/mapping.py, clickhouse/*.py, aggregations.py, posthog.py) prints the same
// ClickHouse SQL in capitals or mixed case as in its own spelling; other names are refused unless
// spelled exactly. The values these print are checked on the servers in
// test/integration/hogql/fidelity.test.ts.
import { describe, expect, it } from 'vitest'
import { compileHogQL } from '../../../src/hogql/index.ts'

// PostHog's case-insensitive names (written from its function tables and tests), each with arguments.
const CASE_INSENSITIVE: [string, string][] = [
  ['not', '1 = 2'],
  ['if', "1, 'a', 'b'"],
  ['least', '1, 2'],
  ['greatest', '1, 2'],
  ['abs', '-1'],
  ['max2', '1, 2'],
  ['min2', '1, 2'],
  ['length', "'ab'"],
  ['reverse', "'ab'"],
  ['isNull', 'NULL'],
  ['coalesce', 'NULL, 1'],
  ['ifNull', 'NULL, 1'],
  ['nullIf', '1, 1'],
  ['now', ''],
  ['lower', "'A'"],
  ['upper', "'a'"],
  ['concat', "'a', 'b'"],
  ['substring', "'abc', 2, 1"],
  ['ascii', "'a'"],
  ['position', "'abc', 'b'"],
  ['extract', "'a1', '[0-9]'"],
  ['replace', "'ab', 'a', 'b'"],
  ['trim', "' a '"],
  ['btrim', "'xax', 'x'"],
  ['exp', '1'],
  ['log', '1'],
  ['ln', '1'],
  ['log2', '1'],
  ['log10', '1'],
  ['sqrt', '4'],
  ['sin', '0'],
  ['cos', '0'],
  ['tan', '0'],
  ['asin', '0'],
  ['acos', '1'],
  ['atan', '0'],
  ['pow', '2, 3'],
  ['power', '2, 3'],
  ['sign', '-1'],
  ['degrees', '1'],
  ['radians', '1'],
  ['factorial', '3'],
  ['floor', '1.5'],
  ['ceil', '1.5'],
  ['trunc', '1.5'],
  ['round', '1.5'],
  ['count', ''],
  ['min', '1'],
  ['max', '1'],
  ['sum', '1'],
  ['avg', '1'],
  ['sortableSemVer', "'1.2.3'"],
  // case-insensitive in PostHog's test_mapping.py (RAND) and its single-file mapping.py (repeat)
  ['rand', ''],
  ['repeat', "'a', 2"],
]

const sql = async (hogql: string) => (await compileHogQL(hogql, { teamId: 1 })).clickhouse
const mixed = (name: string) => name[0]!.toUpperCase() + name.slice(1).toLowerCase()

describe('function names PostHog reads in any case', () => {
  it.each(CASE_INSENSITIVE)('%s(%s) prints the same in capitals and mixed case', async (name, args) => {
    const want = await sql(`select ${name}(${args})`)
    await expect(sql(`select ${name.toUpperCase()}(${args})`)).resolves.toBe(want)
    await expect(sql(`select ${mixed(name)}(${args})`)).resolves.toBe(want)
  })

  it('keeps what Burrow knows of the name it stands for (ISNULL(x) is never NULL)', async () => {
    // A comparison needs its NULL-safe form only where a side can be NULL.
    const want = await sql('select isNull(properties.x) = 1 from events')
    await expect(sql('select ISNULL(properties.x) = 1 from events')).resolves.toBe(want)
  })

  it.each([
    ["LENGTHUTF8('a')", 'LENGTHUTF8'],
    ['TOSTRING(1)', 'TOSTRING'],
    ['ArrayMap(x -> x, [1])', 'ArrayMap'],
    ['SUMIF(1, 1)', 'SUMIF'],
    ['COUNTIF(1)', 'COUNTIF'],
  ])('refuses %s: PostHog reads that name only as spelled', async (q, name) => {
    await expect(sql(`select ${q}`)).rejects.toThrow(`Function '${name}' is not available in HogQL`)
  })
})

describe('string functions print as PostHog prints them (its clickhouse/strings.py)', () => {
  it.each([
    ["lower('ÀB')", "lower('ÀB')"],
    ["UPPER('àb')", "upper('àb')"],
    ["substring('héllo', 2, 2)", "substring('héllo', 2, 2)"],
    ["position('héllo', 'l')", "position('héllo', 'l')"],
    ["positionCaseInsensitive('HÉLLO', 'l')", "positionCaseInsensitive('HÉLLO', 'l')"],
    ["lowerUTF8('ÀB')", "lowerUTF8('ÀB')"],
    ["positionUTF8('héllo', 'l')", "positionUTF8('héllo', 'l')"],
  ])('%s prints %s everywhere', async (hogql, printed) => {
    const want = `SELECT ${printed} AS \`_c0\` LIMIT 100`
    await expect(sql(`select ${hogql}`)).resolves.toBe(want)
  })

  it.each(['position', 'POSITION', 'positionCaseInsensitive', 'positionUTF8', 'positionCaseInsensitiveUTF8'])(
    '%s takes a start position',
    async (name) => {
      const printed = `${name === 'POSITION' ? 'position' : name}('hello', 'l', 4)`
      await expect(sql(`select ${name}('hello', 'l', 4)`)).resolves.toBe(
        `SELECT ${printed} AS \`_c0\` LIMIT 100`,
      )
      await expect(sql(`select ${name}('hello', 'l', 4, 5)`)).rejects.toThrow(/argument/)
    },
  )
})

describe("arity and argument order as PostHog's clickhouse/strings.py gives them", () => {
  // PostHog: substring and substringUTF8 take exactly three arguments (min 3, max 3). substr and
  // mid (Burrow's names for substring; PostHog has neither) take what substring takes.
  it.each(['substring', 'SUBSTRING', 'substringUTF8', 'substr', 'mid'])(
    '%s with two arguments is a 400 naming the arity',
    async (name) => {
      await expect(sql(`select ${name}('hello', 2)`)).rejects.toThrow(
        `Function '${name}' takes 3 argument(s), got 2`,
      )
      await expect(sql(`select ${name}('hello', 2, 1, 1)`)).rejects.toThrow(
        `Function '${name}' takes 3 argument(s), got 4`,
      )
      await expect(sql(`select ${name}('hello', 2, 3)`)).resolves.toMatch(
        /^SELECT substring(UTF8)?\('hello', 2, 3\)/,
      )
    },
  )

  // PostHog prints locate as locate, which ClickHouse 24.3 and later (PostHog's servers) read in
  // MySQL's order: locate(needle, haystack[, start]); Burrow prints position with the two swapped,
  // which reads the same on any release.
  it('prints locate(needle, haystack) as position(haystack, needle) everywhere', async () => {
    const want = "SELECT position('héllo', 'l') AS `_c0` LIMIT 100"
    await expect(sql("select locate('l', 'héllo')")).resolves.toBe(want)
    await expect(sql("select locate('l', 'hello', 4)")).resolves.toBe(
      "SELECT position('hello', 'l', 4) AS `_c0` LIMIT 100",
    )
    await expect(sql("select locate('l', 'hello', 4, 5)")).rejects.toThrow(/argument/)
  })
})

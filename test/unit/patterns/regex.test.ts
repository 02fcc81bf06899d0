import { afterAll, describe, expect, it } from 'vitest'
import { checkFilterPatterns } from '../../../src/flags/definition.ts'
import { compileProgram, MAX_MATCH_COST, MAX_PROGRAM_INSTRUCTIONS } from '../../../src/patterns/program.ts'
import {
  checkRegex,
  closeRegexWorkers,
  InvalidRegex,
  matchRegexes,
  regexFinds,
  regexProblem,
} from '../../../src/patterns/regex.ts'

afterAll(() => closeRegexWorkers())

// The patterns: 4,003 instructions, and twice that (two counted repetitions).
const HEAVY = '(?:a|aa){1000}[0-9]'
const TOO_BIG = '(?:a|aa){1000}(?:b|bb){1000}'

describe('program bounds', () => {
  it('counts instructions and refuses programs over the bound', () => {
    expect(compileProgram(HEAVY).instructions).toBe(4003)
    expect(() => compileProgram(TOO_BIG)).toThrow(InvalidRegex)
    expect(() => compileProgram(TOO_BIG)).toThrow(`at most ${MAX_PROGRAM_INSTRUCTIONS}`)
    expect(() => compileProgram('x'.repeat(5000))).toThrow('longer than')
  })
})

describe('checkRegex (write time, in a regex worker)', () => {
  it('accepts what RE2 compiles within the bounds and says why it refuses the rest', async () => {
    expect(await checkRegex('^.*@example\\.com$', 1)).toBeNull()
    expect(await checkRegex(HEAVY, 1)).toBeNull()
    expect(await checkRegex(TOO_BIG, 1)).toMatch(/too complex: it compiles to 8\d{3} instructions/)
    expect(await checkRegex('(', 1)).toMatch(/missing closing \)/)
    expect(await checkRegex('(?<=a)b', 1)).toMatch(/^invalid regex/)
  })

  it('regexProblem is the synchronous part: simple patterns in full, the rest after a worker told', async () => {
    expect(regexProblem('(')).toMatch(/missing closing/)
    expect(regexProblem('(?:ab|cd){900}(?:ef|gh){900}')).toBeNull() // not compiled here
    await checkRegex('(?:ab|cd){900}(?:ef|gh){900}', 1)
    expect(regexProblem('(?:ab|cd){900}(?:ef|gh){900}')).toMatch(/too complex/)
  })

  it('names the field of a flag condition it refuses', async () => {
    const filters = {
      groups: [
        { properties: [{ key: 'email', operator: 'exact', value: 'x' }] },
        {
          properties: [
            { key: 'a', operator: 'icontains', value: 'b' },
            { key: 'email', operator: 'regex', value: TOO_BIG },
          ],
        },
      ],
    }
    const err = await checkFilterPatterns(filters, 1).catch((e: unknown) => e)
    expect(err).toMatchObject({ status: 400, attr: 'filters.groups.1.properties.1.value' })
    await expect(checkFilterPatterns({ groups: [] }, 1)).resolves.toBeUndefined()
  })
})

describe('matchRegexes (evaluation)', () => {
  it('answers like RE2 does, for patterns seen and unseen', async () => {
    const answers = await matchRegexes(7, [
      { pattern: '^(a+)+$', text: `${'a'.repeat(50)}!` },
      { pattern: '^(a+)+$', text: 'aaaa' },
      { pattern: '@example\\.com$', text: 'me@example.com' },
      { pattern: '(?i)^ME', text: 'me@x' },
    ])
    expect(answers.finds('^(a+)+$', `${'a'.repeat(50)}!`)).toBe(false)
    expect(answers.finds('^(a+)+$', 'aaaa')).toBe(true)
    expect(answers.finds('@example\\.com$', 'me@example.com')).toBe(true)
    expect(answers.finds('(?i)^ME', 'me@x')).toBe(true)
    // now known to be small: answered on this thread, the same
    const again = await matchRegexes(7, [{ pattern: '^(a+)+$', text: 'aaab' }])
    expect(again.finds('^(a+)+$', 'aaab')).toBe(false)
    expect(regexFinds('^(a+)+$', 'aa')).toBe(true)
  })

  it('refuses a match whose program × value is over the cost bound, and values over the length cap', async () => {
    const long = 'a'.repeat(9_999)
    const answers = await matchRegexes(8, [
      { pattern: HEAVY, text: long },
      { pattern: HEAVY, text: `${'a'.repeat(1000)}1` },
      { pattern: 'a', text: 'a'.repeat(10_001) },
    ])
    expect(4003 * long.length).toBeGreaterThan(MAX_MATCH_COST)
    expect(() => answers.finds(HEAVY, long)).toThrow('too costly')
    expect(answers.finds(HEAVY, `${'a'.repeat(1000)}1`)).toBe(true)
    expect(() => answers.finds('a', 'a'.repeat(10_001))).toThrow('value too long')
  })

  it('a bad pattern fails its matches, not the others of the request', async () => {
    const answers = await matchRegexes(9, [
      { pattern: '(', text: 'x' },
      { pattern: 'x', text: 'x' },
    ])
    expect(() => answers.finds('(', 'x')).toThrow(InvalidRegex)
    expect(answers.finds('x', 'x')).toBe(true)
  })
})

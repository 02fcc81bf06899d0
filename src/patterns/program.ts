import { RE2JS } from 're2js'

// Compiling a project's regex under a size bound, on whichever thread calls it (regex.ts decides
// which). RE2 matches in time linear in the text, but linear in text × program: the program of
// `(?:a|aa){1000}[0-9]` has 4,003 instructions and takes ~0.55 s on a 10,000-character value; a 14 KB
// pattern near RE2's own limit compiles to ~120,000 instructions (0.2-0.9 s to compile, megabytes to
// hold). So a pattern is refused past MAX_PROGRAM_INSTRUCTIONS, and values past
// MAX_REGEX_INPUT_CHARS are never matched.

/** A pattern RE2 cannot compile, or one over the size bound; the message says why. */
export class InvalidRegex extends Error {
  override name = 'InvalidRegex'
}

/** The longest pattern text accepted (compiling is linear in it before the program is counted). */
export const MAX_PATTERN_CHARS = 4096

/** The largest compiled program accepted, in RE2 instructions (~200 bytes each held). */
export const MAX_PROGRAM_INSTRUCTIONS = 5000

/**
 * Linear is not free: RE2 in JavaScript takes about a microsecond per character on small programs
 * and ~55 µs per character at MAX_PROGRAM_INSTRUCTIONS, so longer values are not matched (the flag
 * fails for that request, as for a bad pattern); e-mails, URLs and ids are far shorter.
 */
export const MAX_REGEX_INPUT_CHARS = 10_000

/** The most RE2 work one match may cost: program instructions × value characters (~70 ms at worst). */
export const MAX_MATCH_COST = 5_000_000

/** Why a program of `instructions` may not run on a value of `chars` characters, or null. */
export function matchProblem(instructions: number, chars: number): string | null {
  if (chars > MAX_REGEX_INPUT_CHARS) {
    return `value too long to match against a regex (over ${MAX_REGEX_INPUT_CHARS} characters)`
  }
  if (instructions * Math.max(1, chars) > MAX_MATCH_COST) {
    return `regex too costly for this value (${instructions} instructions × ${chars} characters; at most ${MAX_MATCH_COST})`
  }
  return null
}

/** A compiled pattern and what it costs. */
export interface Program {
  re: RE2JS
  instructions: number
  /** an estimate of the memory it holds (for caches bounded by bytes) */
  bytes: number
}

// measured: ~190 bytes of heap per instruction once compiled and matched (find, no DFA), plus the
// pattern's text; rune tables of Unicode classes are shared between programs
const BYTES_PER_INSTRUCTION = 200

/** Compiles `pattern` or throws InvalidRegex (syntax, or over the size bounds). */
export function compileProgram(pattern: string): Program {
  if (pattern.length > MAX_PATTERN_CHARS) {
    throw new InvalidRegex(`regex is longer than ${MAX_PATTERN_CHARS} characters`)
  }
  let re: RE2JS
  try {
    re = RE2JS.compile(pattern)
  } catch (err) {
    throw new InvalidRegex(`invalid regex ${JSON.stringify(pattern)}: ${(err as Error).message}`)
  }
  const instructions = re.programSize()
  if (instructions > MAX_PROGRAM_INSTRUCTIONS) {
    throw new InvalidRegex(
      `regex is too complex: it compiles to ${instructions} instructions, at most ${MAX_PROGRAM_INSTRUCTIONS} are allowed (use fewer or smaller repetitions and alternatives)`,
    )
  }
  return { re, instructions, bytes: instructions * BYTES_PER_INSTRUCTION + pattern.length * 2 + 1024 }
}

/** Whether the program finds a match anywhere in `text` (RegExp.test semantics); throws past the cost bounds. */
export function programFinds(p: Program, text: string): boolean {
  const problem = matchProblem(p.instructions, text.length)
  if (problem !== null) throw new InvalidRegex(problem)
  // find() runs RE2's one-pass, bit-state or NFA engines (no lazy DFA, which holds up to 8 MB a pattern)
  return p.re.matcher(text).find()
}

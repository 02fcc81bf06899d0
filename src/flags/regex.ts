import { RE2JS } from 're2js'

// Flag property regexes (`regex` / `not_regex`) are written by a project's users and matched
// against values a client sends. A backtracking engine (JavaScript's RegExp) takes exponential
// time on patterns like `^(a+)+$`, freezing the whole process; RE2 matches in time linear in the
// input, whatever the pattern. PostHog's flags service uses Rust's `regex` crate, itself an
// RE2-class engine, so the accepted syntax is nearly the same (docs/flags.md lists the
// differences): no lookaround, no backreferences, inline flags like `(?i)` anywhere.

/** A pattern RE2 cannot compile; the message says why. */
export class InvalidRegex extends Error {
  override name = 'InvalidRegex'
}

// Compiling is the expensive part; flags are evaluated far more often than they change.
const MAX_CACHED = 1000
const cache = new Map<string, RE2JS>()

/** The compiled pattern (cached); throws InvalidRegex when RE2 refuses it. */
export function compileRegex(pattern: string): RE2JS {
  const hit = cache.get(pattern)
  if (hit) return hit
  let re: RE2JS
  try {
    re = RE2JS.compile(pattern)
  } catch (err) {
    throw new InvalidRegex(`invalid regex ${JSON.stringify(pattern)}: ${(err as Error).message}`)
  }
  if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!)
  cache.set(pattern, re)
  return re
}

/**
 * Linear is not free: RE2 in JavaScript takes about a microsecond per character, so a value of
 * megabytes would still hold the event loop for seconds. Longer values are not matched (the flag
 * fails for that request, as for a bad pattern); e-mails, URLs and ids are far shorter.
 */
export const MAX_REGEX_INPUT_CHARS = 10_000

/** Whether `pattern` matches anywhere in `text` (RegExp.test semantics), in linear time. */
export function regexFinds(pattern: string, text: string): boolean {
  const re = compileRegex(pattern)
  if (text.length > MAX_REGEX_INPUT_CHARS) {
    throw new InvalidRegex(
      `value too long to match against a regex (over ${MAX_REGEX_INPUT_CHARS} characters)`,
    )
  }
  return re.matcher(text).find()
}

/** Why `pattern` cannot be used, or null when RE2 compiles it. */
export function regexProblem(pattern: string): string | null {
  try {
    compileRegex(pattern)
    return null
  } catch (err) {
    return (err as Error).message
  }
}

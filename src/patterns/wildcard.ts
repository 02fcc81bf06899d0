// `*` patterns a project writes (session recording domains, and any other list of hosts or names
// with wildcards) matched by splitting on `*` and comparing the pieces in order: time linear in the
// text for each piece, whatever the pattern. A RegExp built from the pattern (`*` as `.*`)
// backtracks: `https://*a*a*a*a*a*a*a*a*a*a*b.com` against a 38-character Origin took 2.7-4.2 s of
// the event loop per request.

/**
 * Whether `text` matches `pattern` as a whole, where each `*` stands for any run of characters
 * (none included) and everything else is literal. Case-sensitive, as the RegExp it replaces was.
 */
export function wildcardMatches(pattern: string, text: string): boolean {
  const pieces = pattern.split('*')
  if (pieces.length === 1) return pattern === text
  const first = pieces[0]!
  const last = pieces[pieces.length - 1]!
  if (text.length < first.length + last.length) return false
  if (!text.startsWith(first) || !text.endsWith(last)) return false
  // Between the fixed ends each middle piece takes its leftmost place after the previous one: a
  // later place never leaves more room for the pieces after it, so the first fit is the only try.
  let at = first.length
  const end = text.length - last.length
  for (let i = 1; i < pieces.length - 1; i++) {
    const piece = pieces[i]!
    if (piece === '') continue
    const found = text.indexOf(piece, at)
    if (found < 0 || found + piece.length > end) return false
    at = found + piece.length
  }
  return true
}

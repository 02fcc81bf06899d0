// The one place literals and identifiers become ClickHouse SQL text. Burrow sends no server-side
// parameters, so everything a user supplies passes through here: this module is
// the injection boundary for every query Burrow prints.

const SIMPLE_IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/

function escapeChars(value: string, quote: string): string {
  let out = ''
  for (const ch of value) {
    const code = ch.codePointAt(0)!
    if (ch === '\\') out += '\\\\'
    else if (ch === quote) out += `\\${quote}`
    else if (ch === '\n') out += '\\n'
    else if (ch === '\r') out += '\\r'
    else if (ch === '\t') out += '\\t'
    else if (ch === '\0') out += '\\0'
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`
    else out += ch
  }
  return out
}

/** A single-quoted string literal that reads back as exactly `value` on every server version. */
export function sqlString(value: string): string {
  return `'${escapeChars(value, "'")}'`
}

/** `name` bare when it is a plain identifier, else backticked and escaped. */
export function sqlIdentifier(name: string): string {
  if (SIMPLE_IDENT.test(name)) return name
  return `\`${escapeChars(name, '`')}\``
}

/** Always backticked: for names where a bare keyword (an alias called `from`) would change the statement. */
export function sqlQuotedIdentifier(name: string): string {
  return `\`${escapeChars(name, '`')}\``
}

/** A numeric literal; integers never in exponent form (ClickHouse reads 1e+21 as a float). Throws on NaN/∞. */
export function sqlNumber(value: number): string {
  if (!Number.isFinite(value)) throw new RangeError('Only finite numbers are supported')
  if (Number.isInteger(value)) return Math.abs(value) < 1e21 ? value.toFixed(0) : String(value)
  return String(value)
}

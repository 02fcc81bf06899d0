import { HogQLError } from './errors.ts'

// Everything the user supplies reaches ClickHouse as an escaped literal or a quoted identifier;
// no server-side parameters exist on 18.16, so this file is the injection boundary.

const SIMPLE_IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/

export function escapeIdentifier(name: string): string {
  if (SIMPLE_IDENT.test(name)) return name
  return `\`${escapeChars(name, '`')}\``
}

// Always backticked, for names the printer invents or copies from the user where a bare keyword
// (e.g. an alias called `from`) would change the statement's meaning.
export function quoteIdentifier(name: string): string {
  return `\`${escapeChars(name, '`')}\``
}

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

export function escapeString(value: string): string {
  return `'${escapeChars(value, "'")}'`
}

export function escapeNumber(value: number): string {
  if (!Number.isFinite(value)) {
    throw new HogQLError('bad_argument', 'Only finite numbers are supported')
  }
  if (Number.isInteger(value)) {
    // Avoid exponent notation for big integers: ClickHouse reads 1e+21 as a float.
    return Math.abs(value) < 1e21 ? value.toFixed(0) : String(value)
  }
  return String(value)
}

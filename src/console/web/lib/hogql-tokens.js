// A HogQL tokenizer for highlighting only (the server's parser decides what is valid).

const KEYWORDS = new Set(
  `SELECT FROM WHERE GROUP BY ORDER LIMIT OFFSET HAVING AS AND OR NOT IN IS NULL LIKE ILIKE JOIN LEFT RIGHT
  INNER OUTER FULL CROSS ON USING WITH UNION ALL DISTINCT CASE WHEN THEN ELSE END ASC DESC BETWEEN INTERVAL
  TRUE FALSE ARRAY SAMPLE PREWHERE WINDOW OVER PARTITION ROWS RANGE CAST EXISTS ANY SEMI ANTI NULLS FIRST
  LAST TOP TIES SECOND MINUTE HOUR DAY WEEK MONTH QUARTER YEAR`.split(/\s+/),
)

/**
 * Splits HogQL text into tokens covering it exactly.
 * @param {string} text
 * @returns {{ type: 'kw'|'fn'|'str'|'num'|'com'|'id'|'op'|'ws'|'ph', start: number, end: number }[]}
 */
export function tokenize(text) {
  const out = []
  let i = 0
  const push = (type, end) => {
    out.push({ type, start: i, end })
    i = end
  }
  while (i < text.length) {
    const c = text[i]
    const rest = text.slice(i)
    let m
    if ((m = /^\s+/.exec(rest))) push('ws', i + m[0].length)
    else if (rest.startsWith('--')) {
      const nl = text.indexOf('\n', i)
      push('com', nl < 0 ? text.length : nl)
    } else if (rest.startsWith('/*')) {
      const close = text.indexOf('*/', i + 2)
      push('com', close < 0 ? text.length : close + 2)
    } else if (c === "'" || c === '"' || c === '`') {
      let j = i + 1
      while (j < text.length && text[j] !== c) j += text[j] === '\\' ? 2 : 1
      push(c === "'" ? 'str' : 'id', Math.min(text.length, j + 1))
    } else if ((m = /^\{[A-Za-z_][A-Za-z0-9_]*\}/.exec(rest))) push('ph', i + m[0].length)
    else if ((m = /^(0x[0-9a-fA-F]+|\d+(\.\d+)?([eE][+-]?\d+)?)/.exec(rest))) push('num', i + m[0].length)
    else if ((m = /^[A-Za-z_$][A-Za-z0-9_$]*/.exec(rest))) {
      const word = m[0]
      const after = text.slice(i + word.length).match(/^\s*\(/)
      push(KEYWORDS.has(word.toUpperCase()) ? 'kw' : after ? 'fn' : 'id', i + word.length)
    } else push('op', i + 1)
  }
  return out
}

/**
 * Tokens cut at the error range, each piece flagged when inside it; an empty or out-of-text range
 * marks the character before it so the position is still visible.
 */
export function highlightPieces(text, errStart, errEnd) {
  let s = errStart
  let e = errEnd
  if (s !== null && s !== undefined) {
    s = Math.max(0, Math.min(s, text.length))
    e = Math.max(s, Math.min(e ?? s, text.length))
    if (e === s) {
      if (s < text.length) e = s + 1
      else s = Math.max(0, s - 1)
    }
  }
  const pieces = []
  for (const t of tokenize(text)) {
    const cuts = [t.start, t.end]
    if (s !== null && s !== undefined) {
      if (s > t.start && s < t.end) cuts.push(s)
      if (e > t.start && e < t.end) cuts.push(e)
    }
    cuts.sort((a, b) => a - b)
    for (let k = 0; k + 1 < cuts.length; k++) {
      const a = cuts[k]
      const b = cuts[k + 1]
      if (a === b) continue
      pieces.push({
        type: t.type,
        text: text.slice(a, b),
        err: s !== null && s !== undefined && a >= s && b <= e,
      })
    }
  }
  return pieces
}

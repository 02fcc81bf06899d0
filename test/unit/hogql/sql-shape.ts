// Small inspectors of printed SQL used by the unit tests. They skip string literals and quoted
// identifiers so user text can never fake a match.

export const PHYSICAL = [
  'events',
  'person',
  'person_distinct_id',
  'person_overrides',
  'groups',
  'feature_flag_usage',
  'cohortpeople',
  'person_static_cohort',
  'raw_sessions',
]

interface Frame {
  text: string
}

// Splits SQL into parenthesis frames (each frame's own text, nested frames removed).
export function frames(sql: string): string[] {
  const out: string[] = []
  const stack: Frame[] = [{ text: '' }]
  let i = 0
  while (i < sql.length) {
    const ch = sql[i]!
    if (ch === "'" || ch === '`') {
      // identifiers are kept, string literals blanked, honouring backslash escapes
      let j = i + 1
      while (j < sql.length && sql[j] !== ch) j += sql[j] === '\\' ? 2 : 1
      stack[stack.length - 1]!.text += ch === '`' ? sql.slice(i, j + 1) : "''"
      i = j + 1
      continue
    }
    if (ch === '(') {
      stack.push({ text: '' })
    } else if (ch === ')') {
      out.push(stack.pop()!.text)
      stack[stack.length - 1]!.text += ' _ '
    } else {
      stack[stack.length - 1]!.text += ch
    }
    i++
  }
  out.push(stack[0]!.text)
  return out
}

// Each frame that reads a physical table must be the structural guard for `teamId` (guard.ts): the
// table alone, PREWHERE on the team, and the barrier that keeps outer conditions out (the LIMIT).
export function unguardedReads(sql: string, teamId: number): string[] {
  const bad: string[] = []
  for (const f of frames(sql)) {
    const reads = PHYSICAL.filter((t) => new RegExp(`FROM \`${t}\``).test(f))
    if (!reads.length) continue
    const guarded =
      reads.length === 1 &&
      new RegExp(`^SELECT .* FROM \`${reads[0]}\` PREWHERE team_id = ${teamId}( |$)`).test(f) &&
      / LIMIT 18446744073709551615$/.test(f)
    if (!guarded) bad.push(f)
  }
  return bad
}

// What each guarded read holds after its PREWHERE (its own WHERE, GROUP BY, ...), as printed.
export function guardedReads(sql: string): string[] {
  return [...sql.matchAll(/ PREWHERE team_id = \d+(.*?) LIMIT 18446744073709551615\)/g)].map((m) => m[1]!)
}

export function physicalReads(sql: string): number {
  return frames(sql).filter((f) => PHYSICAL.some((t) => new RegExp(`FROM \`${t}\``).test(f))).length
}

export function maxJoinsPerLevel(sql: string): number {
  return Math.max(0, ...frames(sql).map((f) => (f.replace(/`[^`]*`/g, '').match(/\bJOIN\b/g) ?? []).length))
}

// Every team id the SQL filters on.
export function guardedTeams(sql: string): number[] {
  const ids = [...sql.matchAll(/team_id = (\d+)/g)].map((m) => Number(m[1]))
  return [...new Set(ids)]
}

// Path cleaning rules ({regex, alias}) as a chain of replaceRegexpAll calls, for paths
// (pathReplacements, localPathCleaningFilters) and web analytics (doPathCleaning) alike. One rule
// for incomplete rules, PostHog's for paths (resolve_cleaning_rules): a rule without a regex has
// nothing to match and is skipped; a missing alias strips the match (replaces it with '').
import type { PathCleaningRule } from '../accounts/documents.ts'
import { str } from './insights/common/hogql.ts'

/** A rule as it applies: a regex, and what its matches become. */
export interface CleaningStep {
  regex: string
  alias: string
}

/** The rules that apply, in the order given (the project's are ordered by pathCleaningRules). */
export function cleaningSteps(rules: PathCleaningRule[]): CleaningStep[] {
  const out: CleaningStep[] = []
  for (const r of rules) if (r.regex) out.push({ regex: r.regex, alias: r.alias ?? '' })
  return out
}

/**
 * `item` with each rule applied in turn (every match of the regex becomes the alias). `quote`
 * prints a string literal: HogQL's by default, ClickHouse's for SQL past the compiler.
 */
export function cleanedPath(item: string, steps: CleaningStep[], quote: (s: string) => string = str): string {
  return steps.reduce((acc, r) => `replaceRegexpAll(${acc}, ${quote(r.regex)}, ${quote(r.alias)})`, item)
}

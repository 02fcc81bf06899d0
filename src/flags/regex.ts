// Flag property regexes (`regex` / `not_regex`) are a project's regexes like any other: the API and
// its bounds live in src/patterns/regex.ts. These names are kept for the callers that import them
// from here.
export {
  checkRegex,
  compileRegex,
  InvalidRegex,
  matchRegexes,
  MAX_REGEX_INPUT_CHARS,
  regexFinds,
  regexProblem,
} from '../patterns/regex.ts'

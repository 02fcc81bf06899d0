// Generic values that come from client bugs; merging on them would glue unrelated users together.
const CASE_INSENSITIVE = [
  'anonymous',
  'guest',
  'distinctid',
  'distinct_id',
  'id',
  'not_authenticated',
  'email',
  'undefined',
  'true',
  'false',
]

// Only these exact spellings are suspicious: 'NaN' is a bug, 'nan' may be a real id.
const CASE_SENSITIVE = ['[object Object]', 'NaN', 'None', 'none', 'null', '0', 'undefined']

// Clients have been seen sending the same values wrapped in quotes.
function withQuotes(ids: string[]): Set<string> {
  return new Set(ids.flatMap((id) => [id, `'${id}'`, `"${id}"`]))
}

const CASE_INSENSITIVE_SET = withQuotes(CASE_INSENSITIVE)
const CASE_SENSITIVE_SET = withQuotes(CASE_SENSITIVE)

/** Whether an id is one of the values client bugs send (never merged on). */
export function isDistinctIdIllegal(id: string): boolean {
  return id.trim() === '' || CASE_INSENSITIVE_SET.has(id.toLowerCase()) || CASE_SENSITIVE_SET.has(id)
}

// Errors carry a stable code and the offending span of the user's text so clients can underline it.
// Messages only ever name HogQL-level things (what the user wrote), never physical tables.
/** Stable codes of the errors the compiler reports to users. */
export type HogQLErrorCode =
  | 'syntax_error'
  | 'unknown_table'
  | 'unknown_field'
  | 'ambiguous_field'
  | 'function_not_allowed'
  | 'table_function_not_allowed'
  | 'settings_not_allowed'
  | 'bad_arity'
  | 'bad_argument'
  | 'not_supported'
  | 'missing_placeholder'
  | 'bad_limit'

/** Where in the user's text an error points. */
export interface Span {
  start?: number
  end?: number
}

/** A refusal of the user's query, with a stable code and the span it concerns. */
export class HogQLError extends Error {
  code: HogQLErrorCode
  start?: number
  end?: number

  constructor(code: HogQLErrorCode, message: string, span?: Span) {
    super(message)
    this.name = 'HogQLError'
    this.code = code
    if (span?.start !== undefined) this.start = span.start
    if (span?.end !== undefined) this.end = span.end
  }
}

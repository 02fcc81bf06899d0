// Typed errors, mapped to HTTP in one place (src/http/errors.ts). Bodies follow PostHog's
// shape: { type, code, detail, attr }.

export type ErrorType =
  'validation_error' | 'authentication_error' | 'invalid_request' | 'throttled_error' | 'server_error'

export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly type: ErrorType,
    readonly code: string,
    readonly detail: string,
    readonly attr: string | null = null,
    readonly headers: Record<string, string> = {},
    /** extra fields of the body, e.g. the position of a query error */
    readonly extra: Record<string, unknown> = {},
  ) {
    super(detail)
    this.name = new.target.name
  }
}

export class ValidationError extends AppError {
  constructor(detail: string, attr: string | null = null, code = 'invalid_input') {
    super(400, 'validation_error', code, detail, attr)
  }
}

export class AuthenticationError extends AppError {
  constructor(detail: string, code = 'not_authenticated') {
    super(401, 'authentication_error', code, detail)
  }
}

export class PermissionDenied extends AppError {
  constructor(detail: string, code = 'permission_denied') {
    super(403, 'authentication_error', code, detail)
  }
}

export class NotFound extends AppError {
  constructor(detail = 'Not found.') {
    super(404, 'invalid_request', 'not_found', detail)
  }
}

export class PayloadTooLarge extends AppError {
  constructor(limit: number) {
    super(
      413,
      'invalid_request',
      'payload_too_large',
      `Request body is larger than the limit of ${limit} bytes.`,
    )
  }
}

export class Throttled extends AppError {
  constructor(retryAfterSeconds: number) {
    super(429, 'throttled_error', 'throttled', 'Request was throttled.', null, {
      'retry-after': String(retryAfterSeconds),
    })
  }
}

/** A dependency (NATS, ClickHouse) is unreachable: the client should retry later. */
export class Unavailable extends AppError {
  constructor(detail: string, retryAfterSeconds = 5) {
    super(503, 'server_error', 'unavailable', detail, null, { 'retry-after': String(retryAfterSeconds) })
  }
}

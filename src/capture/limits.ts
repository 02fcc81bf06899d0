import { AppError } from '../http/errors.ts'

// What one capture request may hold; both answers are 413, which posthog-js reads as "send less
// at a time" and retries with smaller batches.

/** More events in one request than CAPTURE_MAX_EVENTS_PER_REQUEST. */
export class TooManyEvents extends AppError {
  constructor(max: number) {
    super(
      413,
      'invalid_request',
      'payload_too_large',
      `The request holds more than ${max} events (CAPTURE_MAX_EVENTS_PER_REQUEST); send them in smaller batches.`,
    )
  }
}

/** A single event (a body that is not a batch) larger than one log message can hold. */
export class EventTooLarge extends AppError {
  constructor(maxChars: number) {
    super(
      413,
      'invalid_request',
      'payload_too_large',
      `An event may be at most ${maxChars} characters of JSON.`,
    )
  }
}

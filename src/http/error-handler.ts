import type { FastifyError, FastifyInstance } from 'fastify'
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod'
import { ZodError } from 'zod'
import { AppError } from './errors.ts'
import { HogQLError } from '../hogql/errors.ts'

export interface ErrorBody {
  type: string
  code: string
  detail: string
  attr: string | null
}

export function errorBody(err: AppError): ErrorBody {
  return { type: err.type, code: err.code, detail: err.detail, attr: err.attr, ...err.extra }
}

function zodIssueBody(path: PropertyKey[], message: string): ErrorBody {
  const attr = path.length ? path.map(String).join('.') : null
  return {
    type: 'validation_error',
    code: 'invalid_input',
    detail: attr ? `${attr}: ${message}` : message,
    attr,
  }
}

/** The one place where errors become HTTP responses. */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError | Error, req, reply) => {
    if (err instanceof AppError) {
      // A dependency's message (ClickHouse's may quote another project's values) stays at debug.
      if (err.status >= 500) {
        req.log.warn({ status: err.status, code: err.code }, err.detail)
        if (err.cause !== undefined) req.log.debug({ err: err.cause }, 'cause')
      }
      return reply.code(err.status).headers(err.headers).send(errorBody(err))
    }
    if (err instanceof HogQLError) {
      // PostHog's shape, plus where in the query text the problem is
      return reply.code(400).send({
        type: 'validation_error',
        code: err.code,
        detail: err.message,
        attr: 'query',
        start: err.start ?? null,
        end: err.end ?? null,
      })
    }
    if (hasZodFastifySchemaValidationErrors(err)) {
      const first = err.validation[0]
      const path = (first?.instancePath ?? '').split('/').filter(Boolean)
      const where =
        err.validationContext && err.validationContext !== 'body' ? [err.validationContext, ...path] : path
      return reply.code(400).send(zodIssueBody(where, first?.message ?? 'invalid request'))
    }
    if (err instanceof ZodError) {
      const first = err.issues[0]
      return reply.code(400).send(zodIssueBody(first?.path ?? [], first?.message ?? 'invalid request'))
    }
    const fe = err as FastifyError
    if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
      const code = fe.statusCode === 413 ? 'payload_too_large' : (fe.code ?? 'invalid_request').toLowerCase()
      return reply
        .code(fe.statusCode)
        .send({ type: 'invalid_request', code, detail: fe.message, attr: null } satisfies ErrorBody)
    }
    // The message may hold a dependency's text with row values: its kind at error, all at debug.
    req.log.error({ err_name: err.name, err_code: (err as FastifyError).code }, 'unhandled error')
    req.log.debug({ err }, 'unhandled error detail')
    return reply.code(500).send({
      type: 'server_error',
      code: 'error',
      detail: 'Internal server error.',
      attr: null,
    } satisfies ErrorBody)
  })
  app.setNotFoundHandler((req, reply) =>
    reply.code(404).send({
      type: 'invalid_request',
      code: 'not_found',
      detail: `No route for ${req.method} ${req.url.split('?')[0]}`,
      attr: null,
    } satisfies ErrorBody),
  )
}

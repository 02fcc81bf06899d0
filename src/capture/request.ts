import type { FastifyInstance, FastifyRequest } from 'fastify'
import { z } from 'zod'
import { decodeBody } from './decode.ts'
import type { ReadLimits } from './json-reader.ts'
import { type ParsedRequest, parseEnvelope } from './normalize.ts'

// Event capture and session recording (/s/) receive the same envelope from PostHog's SDKs, in the
// same wrappings: reading one is done here for both.

/** The query parameters a capture request may carry; others are let through and ignored. */
export const CaptureQuery = z
  .object({
    compression: z.string().optional(),
    token: z.string().optional(),
    api_key: z.string().optional(),
    _: z.coerce.number().optional().catch(undefined),
  })
  .passthrough()

/** Capture bodies arrive in many content types: `scope` takes them all raw, for readEnvelope. */
export function takeRawBodies(scope: FastifyInstance): void {
  scope.removeAllContentTypeParsers()
  scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body))
}

/**
 * The request's envelope: its body decoded (content type, encoding and the `compression`
 * parameter) into at most `maxDecompressedBytes`, read within `limits`, and parsed, the token
 * taken from the body or else the query.
 */
export async function readEnvelope(
  req: FastifyRequest,
  query: z.infer<typeof CaptureQuery>,
  limits: ReadLimits,
  maxDecompressedBytes: number,
): Promise<ParsedRequest> {
  const body = await decodeBody(
    {
      body: Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0),
      contentType: req.headers['content-type'],
      contentEncoding: req.headers['content-encoding'],
      compression: query.compression,
      maxDecompressedBytes,
    },
    limits,
  )
  return parseEnvelope(body, { token: query.token ?? query.api_key, sentAtMs: query._ })
}

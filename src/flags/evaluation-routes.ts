import { randomUUID } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { z } from 'zod'
import { decodeBody } from '../capture/decode.ts'
import type { Project } from '../accounts/documents.ts'
import { AuthenticationError } from '../http/errors.ts'
import { clientAddress } from '../geoip/index.ts'
import type { FlagQuota } from './quota.ts'
import { parseFlagRequest } from './request.ts'
import { decideV3Body, decideV4Body, flagsV2Body, flagsV2Json, remoteConfigFields } from './responses.ts'
import { type EvaluationDeps, type EvaluationOutcome, evaluateRequest } from './service.ts'
import type { SdkConfigFields } from '../remote-config/flags-fields.ts'

// The public evaluation endpoints: POST /decide (?v=1..4) and POST /flags (plain or ?v=2),
// authenticated by the project API key in the body, bodies wrapped like capture bodies.

/** Body limit of /decide and /flags; decompressed bodies may be five times this. */
export const FLAGS_BODY_LIMIT = 1024 * 1024

export interface EvaluationRouteDeps extends EvaluationDeps {
  quota: FlagQuota
  maxDecompressedBytes: number
  projectByToken(token: string): Promise<Project | undefined>
  /** the project's remote config fields for /decide and /flags?config=true */
  remoteConfig?: SdkConfigFields
}

const Query = z
  .object({
    v: z.coerce.number().int().optional().catch(undefined),
    compression: z.string().optional(),
    token: z.string().optional(),
    api_key: z.string().optional(),
    config: z.string().optional(),
  })
  .passthrough()

type Query = z.infer<typeof Query>

interface Evaluated {
  project: Project
  outcome: EvaluationOutcome | null
  quotaLimited: boolean
  requestId: string
  evaluatedAt: number
}

/** What fastify sends with an object it serializes. */
const JSON_TYPE = 'application/json; charset=utf-8'

const EMPTY_OUTCOME: EvaluationOutcome = {
  evaluation: { results: {}, errorsWhileComputingFlags: false, errors: {} },
  definitions: [],
}

export function registerEvaluationRoutes(app: FastifyInstance, deps: EvaluationRouteDeps): void {
  // Bodies come as JSON, gzip, lz64 or base64 forms; decodeBody unwraps them all.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body))

  const evaluate = async (req: FastifyRequest, query: Query): Promise<Evaluated> => {
    const body = await decodeBody(
      {
        body: Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0),
        contentType: req.headers['content-type'],
        contentEncoding: req.headers['content-encoding'],
        compression: query.compression,
        maxDecompressedBytes: deps.maxDecompressedBytes,
      },
      // a flags request is one object; big ones are still read without holding up others
      {
        maxEvents: Number.MAX_SAFE_INTEGER,
        maxEventChars: deps.maxDecompressedBytes,
        incrementalFrom: 256 * 1024,
      },
    )
    const request = parseFlagRequest(body, query.token ?? query.api_key)
    const project = await deps.projectByToken(request.token)
    if (!project) throw new AuthenticationError('Project API key invalid.', 'invalid_api_key')
    const requestId = randomUUID()
    const evaluatedAt = Date.now()
    if (!deps.quota.allow(project.organization_id, evaluatedAt)) {
      return { project, outcome: null, quotaLimited: true, requestId, evaluatedAt }
    }
    const ip = clientAddress(req.headers['x-forwarded-for'], req.ip)
    const outcome = await evaluateRequest(deps, project.id, request, ip)
    return { project, outcome, quotaLimited: false, requestId, evaluatedAt }
  }

  const decide = async (req: FastifyRequest) => {
    const query = Query.parse(req.query ?? {})
    const done = await evaluate(req, query)
    const config = (await deps.remoteConfig?.decide(done.project, req.headers)) ?? {}
    // The spec's fields (supportedCompression among them) stay as the body has them.
    return { ...config, ...decideBody(query.v ?? 1, done) }
  }

  const decideBody = (version: number, done: Evaluated) => {
    const { evaluation, definitions } = done.outcome ?? EMPTY_OUTCOME
    if (version >= 4) return decideV4Body(evaluation, definitions, { ...done })
    const v3 = decideV3Body(evaluation, done.quotaLimited)
    if (version === 3) return v3
    // v2: values without payloads; v1 (and no v): the list of enabled flag keys.
    const { featureFlagPayloads: _payloads, ...v2 } = v3
    if (version === 2) return v2
    return { ...v2, featureFlags: Object.keys(v3.featureFlags).filter((k) => v3.featureFlags[k] !== false) }
  }

  const flags = async (req: FastifyRequest, reply: FastifyReply) => {
    const query = Query.parse(req.query ?? {})
    const done = await evaluate(req, query)
    const { evaluation, definitions } = done.outcome ?? EMPTY_OUTCOME
    if ((query.v ?? 1) >= 2) {
      if (query.config !== 'true') {
        // The body's JSON text made directly (flagsV2Json): the hot path of flag evaluation. As
        // bytes, encoded once: for a string fastify measures its byte length, then node encodes it.
        return reply.type(JSON_TYPE).send(Buffer.from(flagsV2Json(evaluation, definitions, done)))
      }
      const body = flagsV2Body(evaluation, definitions, { ...done })
      const config = (await deps.remoteConfig?.flags(done.project, req.headers)) ?? {}
      return { ...config, ...remoteConfigFields(), ...body }
    }
    // The service's v1 shape: the decide v3 values with the request id.
    const v3 = decideV3Body(evaluation, done.quotaLimited)
    return {
      featureFlags: v3.featureFlags,
      featureFlagPayloads: v3.featureFlagPayloads,
      errorsWhileComputingFlags: v3.errorsWhileComputingFlags,
      ...(v3.quotaLimited ? { quotaLimited: v3.quotaLimited } : {}),
      requestId: done.requestId,
    }
  }

  // A flags request is one subject's properties: a megabyte is far more than an SDK sends.
  const opts = { bodyLimit: FLAGS_BODY_LIMIT }
  for (const path of ['/decide', '/decide/']) app.post(path, opts, decide)
  for (const path of ['/flags', '/flags/']) app.post(path, opts, flags)
}

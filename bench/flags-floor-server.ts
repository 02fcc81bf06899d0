// The least HTTP server that answers bench/flags.ts's requests as Burrow does, for its floor line:
// Fastify (Burrow's framework) with its default JSON parser, one route that evaluates the project's
// flags on the request's person properties with Burrow's evaluator and writes Burrow's /flags?v=2
// JSON text. No key check, no person lookup, no CORS, no request log, no metrics, no quota.
// DEFINITIONS_FILE names a JSON array of the project's flag definitions (as /flags/definitions gives).
// Prints `listening <port>` on stdout once it accepts requests.
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import Fastify from 'fastify'
import { flagDefinitionSchema } from '../src/flags/definition.ts'
import { evaluateFlags } from '../src/flags/evaluate.ts'
import { flagsV2Json } from '../src/flags/responses.ts'

const definitions = (JSON.parse(readFileSync(process.env.DEFINITIONS_FILE!, 'utf8')) as unknown[]).map((f) =>
  flagDefinitionSchema.parse(f),
)

const app = Fastify({ logger: false })
app.post('/flags', async (req, reply) => {
  const body = req.body as { distinct_id: string; person_properties?: Record<string, unknown> }
  const evaluation = evaluateFlags(definitions, {
    distinctId: body.distinct_id,
    personProperties: body.person_properties ?? {},
    groups: {},
    groupProperties: {},
    groupTypeIndexToName: {},
  })
  const text = flagsV2Json(evaluation, definitions, { requestId: randomUUID(), evaluatedAt: Date.now() })
  return reply.type('application/json').send(Buffer.from(text))
})
await app.listen({ port: 0, host: '127.0.0.1' })
const a = app.server.address()
console.log(`listening ${typeof a === 'object' && a ? a.port : 0}`)

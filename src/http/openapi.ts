import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import { jsonSchemaTransform } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { App } from './server.ts'

// The OpenAPI document is generated from the routes' zod schemas. @fastify/swagger learns routes
// through an onRoute hook, so it must be on the root app before any route it should describe.

export const SCHEMA_PATH = '/api/schema/'
export const DOCS_PATH = '/api/schema/swagger-ui'

const SchemaQuery = z.object({ format: z.enum(['json', 'yaml']).default('json') })

/** Call first in the api component's start: registers the generator, `/api/schema/` and the docs UI. */
export async function registerOpenApi(app: App): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Burrow API',
        description:
          'PostHog-compatible management and query API. Authenticate with `Authorization: Bearer ' +
          '<personal API key>`; each operation names the scope it needs in docs/api.md.',
        version: '0.1.0',
      },
      components: {
        securitySchemes: { PersonalAPIKeyAuth: { type: 'http', scheme: 'bearer' } },
      },
      security: [{ PersonalAPIKeyAuth: [] }],
    },
    transform: jsonSchemaTransform,
  })
  await app.register(swaggerUi, { routePrefix: DOCS_PATH })
  app.get(SCHEMA_PATH, { schema: { hide: true, querystring: SchemaQuery } }, async (req, reply) => {
    const { format } = req.query
    if (format === 'yaml') return reply.type('application/yaml').send(app.swagger({ yaml: true }))
    return reply.type('application/json').send(JSON.stringify(app.swagger()))
  })
}

import { randomUUID } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import { AppError } from '../../../src/http/errors.ts'
import { queryRunnerOf } from '../../../src/queries/index.ts'
import { runWrite } from '../../../src/queries/writes.ts'
import { createTestProject } from '../../harness/index.ts'
import { type Env, managementEnv } from '../../harness/management.ts'

// A cohort calculation is a query like any other (src/queries/writes.ts): listed with a status,
// cancelled by DELETE /query/:id (killed in ClickHouse), and under the concurrency caps.

let env: Env
let project: Project

beforeAll(async () => {
  env = await managementEnv()
  project = await createTestProject('cohort cancel')
})

describe('calculations as queries', () => {
  it('is cancelled by DELETE /query/:id and stops in ClickHouse', async () => {
    const rt = env.burrow.runtime
    const runner = queryRunnerOf(rt)!
    const id = randomUUID()
    // long enough to be cancelled: billions of rows, none of which is written
    const slow = `INSERT INTO cohortpeople (team_id, cohort_id, version, person_id)
      SELECT ${project.id}, 1, 1, generateUUIDv4() FROM numbers(100000000000) WHERE rand() = 0 AND number % 7 = 8`
    const running = runWrite(runner, rt.queryCh, project, slow, { id, keyId: 'test', log: rt.log })
    running.catch(() => undefined)
    const status = `/api/projects/${project.id}/query/${id}/`
    const end = Date.now() + 10_000
    while ((await env.call('GET', status)).status !== 200 && Date.now() < end)
      await new Promise((r) => setTimeout(r, 20))
    expect((await env.call('GET', status)).body.query_status).toMatchObject({ id, complete: false })
    const cancel = await env.call('DELETE', status)
    expect([202, 204]).toContain(cancel.status)
    const err = await running.then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(err).toBeInstanceOf(AppError)
    expect((err as AppError).code).toBe('query_cancelled')
    expect((await env.call('GET', status)).body.query_status).toMatchObject({
      complete: true,
      cancelled: true,
    })
  })
})

import type { Project } from '../../src/accounts/documents.ts'
import { AccountStore } from '../../src/accounts/store.ts'
import type { RunningBurrow } from '../../src/runtime/start.ts'
import { api, createTestKey, createTestProject, nats, startTestBurrow } from './index.ts'

export interface Env {
  burrow: RunningBurrow
  project: Project
  other: Project
  /** `*` key of user 1 */
  call: ReturnType<typeof api>
  as(scopes: string[], projects?: number[] | null): Promise<ReturnType<typeof api>>
}

/** Burrow with a generous rate limit and two fresh projects of the default organization. */
export async function managementEnv(): Promise<Env> {
  const burrow = await startTestBurrow({ API_RATE_LIMIT_PER_MINUTE: '100000' })
  const project = await createTestProject('management')
  const other = await createTestProject('someone else')
  return {
    burrow,
    project,
    other,
    call: api(burrow.url, await createTestKey(['*'])),
    as: async (scopes, projects = null) => api(burrow.url, await createTestKey(scopes, projects)),
  }
}

/** A second user of the default organization with a key of its own. */
export async function secondUser(burrow: RunningBurrow, email: string) {
  const store = await AccountStore.open(await nats())
  const admin = await store.getUser(1)
  const user = await store.createUser({
    organization_id: admin!.organization_id,
    email,
    first_name: 'Second',
    last_name: 'User',
  })
  const { key } = await store.createPersonalKey({
    user_id: user.id,
    label: 'second',
    scopes: ['*'],
    projects: null,
  })
  return { user, call: api(burrow.url, key) }
}

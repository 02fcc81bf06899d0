import { chmodSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { z } from 'zod'
import type { AccountStore } from './store.ts'

export const CredentialsSchema = z.object({
  project_id: z.number().int(),
  project_api_key: z.string().startsWith('phc_'),
  personal_api_key: z.string().startsWith('phx_'),
})
export type Credentials = z.infer<typeof CredentialsSchema>

export const credentialsFile = (dataDir: string) => join(resolve(dataDir), 'local-credentials.json')

function readCredentials(path: string): Credentials | undefined {
  try {
    return CredentialsSchema.parse(JSON.parse(readFileSync(path, 'utf8')))
  } catch {
    return undefined
  }
}

/**
 * The first start creates a default organization, user, project (id 1) and an all-scopes personal
 * key; later starts reuse them. Returns `created` so the caller prints the keys only when new.
 */
export async function ensureDefaults(
  store: AccountStore,
  dataDir: string,
): Promise<{ credentials: Credentials; created: boolean }> {
  const path = credentialsFile(dataDir)
  const existing = readCredentials(path)
  if (existing) {
    const project = await store.getProject(existing.project_id)
    const key = await store.personalKey(existing.personal_api_key)
    if (project && project.api_token === existing.project_api_key && key) {
      return { credentials: existing, created: false }
    }
  }
  let project = await store.getProject(1)
  if (!project) {
    const org = await store.createOrganization('Default organization')
    project = await store.createProject({ name: 'Default project', organization_id: org.id })
  }
  // The key needs an owner in the project's organization; a store whose projects were made
  // before any user (by `projects create`, or by tests) gets one now.
  const first = await store.getUser(1)
  const owner =
    first && first.organization_id === project.organization_id
      ? first
      : await store.createUser({
          organization_id: project.organization_id,
          email: 'admin@localhost',
          first_name: 'Admin',
        })
  // The raw personal key is never stored, so a lost credentials file gets a fresh key.
  const { key } = await store.createPersonalKey({
    user_id: owner.id,
    label: 'local default',
    scopes: ['*'],
    projects: null,
  })
  const credentials: Credentials = {
    project_id: project.id,
    project_api_key: project.api_token,
    personal_api_key: key,
  }
  writeFileSync(path, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 })
  chmodSync(path, 0o600)
  return { credentials, created: true }
}

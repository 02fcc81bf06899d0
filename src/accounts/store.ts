import { createHash, randomBytes } from 'node:crypto'
import type { KV } from '@nats-io/kv'
import { v4 as uuidv4 } from 'uuid'
import type { z } from 'zod'
import { BUCKETS } from '../../schema/jetstream.ts'
import { bucket, type NatsConnection } from '../jetstream/connection.ts'
import {
  OrganizationDoc,
  type PersonalKey,
  PersonalKeyDoc,
  type Project,
  ProjectDoc,
  type User,
  UserDoc,
} from './documents.ts'
import { updateDoc } from '../jetstream/kv-document.ts'

const enc = new TextEncoder()
const dec = new TextDecoder()

export const hashKey = (raw: string) => createHash('sha256').update(raw).digest('hex')
const token = (prefix: string) => `${prefix}${randomBytes(24).toString('base64url')}`

/**
 * Organizations, projects, users and API keys, event-sourced in a JetStream KV bucket.
 * Personal API keys are stored only as their sha256; project API tokens are public by design.
 */
export class AccountStore {
  private constructor(readonly kv: KV) {}

  static async open(nc: NatsConnection): Promise<AccountStore> {
    return new AccountStore(await bucket(nc, BUCKETS.config))
  }

  private async read<T extends z.ZodTypeAny>(key: string, schema: T): Promise<z.infer<T> | undefined> {
    const e = await this.kv.get(key)
    if (e?.operation !== 'PUT' || e.value.length === 0) return undefined
    return schema.parse(JSON.parse(dec.decode(e.value)))
  }

  private async write(key: string, doc: unknown): Promise<void> {
    await this.kv.put(key, enc.encode(JSON.stringify(doc)))
  }

  /** Revision-checked counter, so concurrent creators never hand out the same id. */
  private async nextId(name: string): Promise<number> {
    const key = `seq.${name}`
    for (let attempt = 0; attempt < 50; attempt++) {
      const e = await this.kv.get(key)
      const current = e && e.operation === 'PUT' ? Number(dec.decode(e.value)) : 0
      const next = current + 1
      try {
        if (e && e.operation === 'PUT') await this.kv.update(key, enc.encode(String(next)), e.revision)
        else await this.kv.create(key, enc.encode(String(next)))
        return next
      } catch {
        // lost the race: read again
      }
    }
    throw new Error(`could not allocate an id for ${name}`)
  }

  async createOrganization(name: string) {
    const doc = OrganizationDoc.parse({ id: uuidv4(), name, created_at: new Date().toISOString() })
    await this.write(`org.${doc.id}`, doc)
    return doc
  }

  async createUser(input: {
    organization_id: string
    email: string
    first_name?: string
    last_name?: string
  }) {
    const id = await this.nextId('user')
    const uuid = uuidv4()
    const doc: User = UserDoc.parse({
      id,
      uuid,
      distinct_id: uuid,
      first_name: input.first_name ?? '',
      last_name: input.last_name ?? '',
      email: input.email,
      organization_id: input.organization_id,
      created_at: new Date().toISOString(),
    })
    await this.write(`user.${id}`, doc)
    return doc
  }

  getUser(id: number) {
    return this.read(`user.${id}`, UserDoc)
  }

  async createProject(input: { name: string; organization_id: string; timezone?: string }): Promise<Project> {
    const id = await this.nextId('project')
    const doc = ProjectDoc.parse({
      id,
      uuid: uuidv4(),
      organization_id: input.organization_id,
      name: input.name,
      api_token: token('phc_'),
      timezone: input.timezone ?? 'UTC',
      created_at: new Date().toISOString(),
    })
    await this.write(`project.${id}`, doc)
    await this.write(`token.${hashKey(doc.api_token)}`, { project_id: id })
    return doc
  }

  getProject(id: number) {
    return this.read(`project.${id}`, ProjectDoc)
  }

  async listProjects(): Promise<Project[]> {
    const out: Project[] = []
    for await (const k of await this.kv.keys('project.*')) {
      const p = await this.read(k, ProjectDoc)
      if (p) out.push(p)
    }
    return out.sort((a, b) => a.id - b.id)
  }

  async projectByToken(apiToken: string): Promise<Project | undefined> {
    const ref = await this.kv.get(`token.${hashKey(apiToken)}`)
    if (ref?.operation !== 'PUT') return undefined
    const { project_id } = JSON.parse(dec.decode(ref.value)) as { project_id: number }
    return this.getProject(project_id)
  }

  /** Returns the raw key once; only its hash is stored. */
  async createPersonalKey(input: {
    user_id: number
    label: string
    scopes: string[]
    projects: number[] | null
  }): Promise<{ key: string; doc: PersonalKey }> {
    const raw = token('phx_')
    const doc = PersonalKeyDoc.parse({
      id: uuidv4(),
      label: input.label,
      user_id: input.user_id,
      scopes: input.scopes,
      projects: input.projects,
      mask: `${raw.slice(0, 8)}...${raw.slice(-4)}`,
      created_at: new Date().toISOString(),
    })
    await this.write(`pak.${hashKey(raw)}`, doc)
    return { key: raw, doc }
  }

  personalKey(raw: string) {
    return this.read(`pak.${hashKey(raw)}`, PersonalKeyDoc)
  }

  /**
   * Read-modify-write of a project document, revision-checked: `change` may run again after a
   * concurrent write, so it must be pure. Undefined when the project does not exist.
   */
  updateProject(id: number, change: (current: Project) => Project | undefined): Promise<Project | undefined> {
    return updateDoc(this.kv, `project.${id}`, ProjectDoc, change)
  }
}

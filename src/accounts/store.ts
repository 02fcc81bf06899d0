import { createHash, randomBytes } from 'node:crypto'
import type { KV } from '@nats-io/kv'
import { v4 as uuidv4 } from 'uuid'
import { z } from 'zod'
import { BUCKETS } from '../../schema/jetstream.ts'
import { bucket, type NatsConnection } from '../jetstream/connection.ts'
import {
  deleteDoc,
  listDocs,
  listKeys,
  nextSequence,
  putDoc,
  readDoc,
  updateDoc,
} from '../jetstream/kv-document.ts'
import {
  OrganizationDoc,
  type PersonalKey,
  PersonalKeyDoc,
  type Project,
  ProjectDoc,
  type User,
  UserDoc,
} from './documents.ts'
import type { AccountMirror } from './mirror.ts'

export const hashKey = (raw: string) => createHash('sha256').update(raw).digest('hex')
const TokenRef = z.object({ project_id: z.number().int() })
const token = (prefix: string) => `${prefix}${randomBytes(24).toString('base64url')}`

/**
 * Organizations, projects, users and API keys, event-sourced in a JetStream KV bucket.
 * Personal API keys are stored only as their sha256; project API tokens are public by design.
 */
export class AccountStore {
  /** keys, users and projects in memory (mirror.ts): set by processes that authenticate requests */
  private mirror: AccountMirror | undefined

  private constructor(readonly kv: KV) {}

  static async open(nc: NatsConnection): Promise<AccountStore> {
    return new AccountStore(await bucket(nc, BUCKETS.config))
  }

  /**
   * Answers authentication's reads (authKey, authUser, authProject) from `mirror` where it can;
   * writes made through this store re-read their key into it before they return. Every other read
   * goes to the bucket: a cache that rebuilds after its own watch saw a change (remote config)
   * must not read a mirror that has not seen it yet.
   */
  useMirror(mirror: AccountMirror): void {
    this.mirror = mirror
  }

  private async read<T extends z.ZodTypeAny>(key: string, schema: T): Promise<z.infer<T> | undefined> {
    return (await readDoc(this.kv, key, schema))?.doc
  }

  /** `read`, from the mirror when it knows the key (authentication only; see useMirror). */
  private async readForAuth<T extends z.ZodTypeAny>(key: string, schema: T): Promise<z.infer<T> | undefined> {
    const known = this.mirror?.lookup(key, schema)
    return known ? known.doc : this.read(key, schema)
  }

  /** The key's document, as authentication reads it (from memory where the mirror knows it). */
  authKey(raw: string) {
    return this.readForAuth(`pak.${hashKey(raw)}`, PersonalKeyDoc)
  }

  /** A user, as authentication reads it. */
  authUser(id: number) {
    return this.readForAuth(`user.${id}`, UserDoc)
  }

  /** A project, as authentication reads it (the project a project route then serves). */
  authProject(id: number) {
    return this.readForAuth(`project.${id}`, ProjectDoc)
  }

  private async write(key: string, doc: unknown): Promise<void> {
    await putDoc(this.kv, key, doc)
    await this.mirror?.refresh(key)
  }

  /** Revision-checked counter, so concurrent creators never hand out the same id. */
  private nextId(name: string): Promise<number> {
    return nextSequence(this.kv, `seq.${name}`)
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
    return (await listDocs(this.kv, 'project.*', ProjectDoc)).sort((a, b) => a.id - b.id)
  }

  async projectByToken(apiToken: string): Promise<Project | undefined> {
    const ref = await this.read(`token.${hashKey(apiToken)}`, TokenRef)
    return ref && this.getProject(ref.project_id)
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
  async updateProject(
    id: number,
    change: (current: Project) => Project | undefined,
  ): Promise<Project | undefined> {
    const updated = await updateDoc(this.kv, `project.${id}`, ProjectDoc, change)
    await this.mirror?.refresh(`project.${id}`)
    return updated
  }

  /** Every personal API key (its document; the raw key is never stored), oldest first. */
  async listPersonalKeys(): Promise<PersonalKey[]> {
    const keys = await listDocs(this.kv, 'pak.*', PersonalKeyDoc)
    return keys.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id))
  }

  /** Deletes the key with document id `id`: requests with it are refused from then on. False when unknown. */
  async revokePersonalKey(id: string): Promise<boolean> {
    for (const k of await listKeys(this.kv, 'pak.*')) {
      const found = await readDoc(this.kv, k, PersonalKeyDoc)
      if (found?.doc.id === id) {
        const deleted = await deleteDoc(this.kv, k, found.revision)
        await this.mirror?.refresh(k)
        return deleted
      }
    }
    return false
  }
}

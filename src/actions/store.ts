import type { KV } from '@nats-io/kv'
import { BUCKETS } from '../../schema/jetstream.ts'
import { NotFound } from '../http/errors.ts'
import { bucket, type NatsConnection } from '../jetstream/connection.ts'
import { createDoc, listDocs, nextSequence, readDoc, updateDoc } from '../jetstream/kv-document.ts'
import { type Action, ActionDoc, type ActionWrite } from './document.ts'

// Actions in the `burrow_actions` bucket: `action.<team>.<id>`, ids from one counter for every
// project (`seq.action`), so an id names at most one action anywhere and another project's id is
// simply not found. Soft deleted only (PostHog forbids DELETE).

export const ACTION_PREFIX = 'action'
const key = (team: number, id: number) => `${ACTION_PREFIX}.${team}.${id}`

const WRITABLE = [
  'name',
  'description',
  'tags',
  'post_to_slack',
  'slack_message_format',
  'steps',
  'deleted',
  'pinned_at',
] as const

function changes(input: ActionWrite): Partial<Action> {
  const out: Record<string, unknown> = {}
  for (const k of WRITABLE) if (input[k] !== undefined) out[k] = input[k]
  return out as Partial<Action>
}

export class ActionStore {
  private constructor(readonly kv: KV) {}

  static async open(nc: NatsConnection): Promise<ActionStore> {
    return new ActionStore(await bucket(nc, BUCKETS.actions))
  }

  async create(team: number, input: ActionWrite, userId: number | null): Promise<Action> {
    const id = await nextSequence(this.kv, `seq.${ACTION_PREFIX}`)
    const now = new Date().toISOString()
    const doc = ActionDoc.parse({
      id,
      team_id: team,
      name: null,
      description: '',
      tags: [],
      post_to_slack: false,
      slack_message_format: '',
      steps: [],
      deleted: false,
      pinned_at: null,
      ...changes(input),
      created_at: now,
      created_by: userId,
      updated_at: now,
    })
    if (!(await createDoc(this.kv, key(team, id), doc)))
      throw new Error(`action ${team}/${id} already exists`)
    return doc
  }

  /** Deleted ones too (a PATCH may bring one back); NotFound for another project's. */
  async get(team: number, id: number): Promise<Action> {
    const found = await readDoc(this.kv, key(team, id), ActionDoc)
    if (!found) throw new NotFound()
    return found.doc
  }

  async list(team: number): Promise<Action[]> {
    return (await listDocs(this.kv, `${ACTION_PREFIX}.${team}.*`, ActionDoc)).sort((a, b) => a.id - b.id)
  }

  /** Applies the given fields to the latest revision (a concurrent change is never lost). */
  async update(team: number, id: number, input: ActionWrite): Promise<Action> {
    const next = await updateDoc(this.kv, key(team, id), ActionDoc, (current) =>
      ActionDoc.parse({
        ...current,
        ...changes(input),
        // PostHog keeps the first pin time; unpinning clears it
        pinned_at:
          input.pinned_at === undefined
            ? current.pinned_at
            : input.pinned_at === null
              ? null
              : (current.pinned_at ?? new Date().toISOString()),
        updated_at: new Date().toISOString(),
      }),
    )
    if (!next) throw new NotFound()
    return next
  }
}

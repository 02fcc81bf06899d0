import type { KV } from '@nats-io/kv'
import { BUCKETS } from '../../schema/jetstream.ts'
import { NotFound } from '../http/errors.ts'
import { bucket, type NatsConnection } from '../jetstream/connection.ts'
import { createDoc, listDocs, nextSequence, readDoc, updateDoc } from '../jetstream/kv-document.ts'
import { type Cohort, CohortDoc } from './document.ts'

// Cohorts in the `burrow_cohorts` bucket: `cohort.<team>.<id>`, ids from one counter for every
// project (`seq.cohort`), so an id names at most one cohort anywhere and another project's id is
// simply not found. Every change is a revision-checked write: a calculation finishing never
// overwrites an edit made meanwhile, nor the other way round. Soft deleted only.

export const COHORT_PREFIX = 'cohort'
const key = (team: number, id: number) => `${COHORT_PREFIX}.${team}.${id}`

/** The fields a new cohort is given (the rest start empty). */
export type NewCohort = Pick<
  Cohort,
  'name' | 'description' | 'filters' | 'groups' | 'is_static' | 'cohort_type'
>

export class CohortStore {
  private constructor(readonly kv: KV) {}

  static async open(nc: NatsConnection): Promise<CohortStore> {
    return new CohortStore(await bucket(nc, BUCKETS.cohorts))
  }

  async create(team: number, input: NewCohort, userId: number | null): Promise<Cohort> {
    const id = await nextSequence(this.kv, `seq.${COHORT_PREFIX}`)
    const now = new Date().toISOString()
    const doc = CohortDoc.parse({
      ...input,
      id,
      team_id: team,
      deleted: false,
      created_by: userId,
      created_at: now,
      updated_at: now,
      version: null,
      // a dynamic cohort is calculated as soon as it exists (PostHog: is_calculating on create)
      pending_version: input.is_static ? null : 1,
      count: input.is_static ? 0 : null,
      is_calculating: !input.is_static,
      last_calculation: null,
      errors_calculating: 0,
      last_error_at: null,
      last_error: null,
      calculation: null,
      members_changed_at: null,
    })
    if (!(await createDoc(this.kv, key(team, id), doc)))
      throw new Error(`cohort ${team}/${id} already exists`)
    return doc
  }

  /** Deleted ones too (a PATCH may bring one back); NotFound for another project's. */
  async get(team: number, id: number): Promise<Cohort> {
    const found = await readDoc(this.kv, key(team, id), CohortDoc)
    if (!found) throw new NotFound()
    return found.doc
  }

  async list(team: number): Promise<Cohort[]> {
    return (await listDocs(this.kv, `${COHORT_PREFIX}.${team}.*`, CohortDoc)).sort((a, b) => a.id - b.id)
  }

  /**
   * Read-modify-write on the latest revision: `change` may run several times (never with side
   * effects) and returns undefined to leave the cohort as it is. NotFound when there is none.
   */
  async change(team: number, id: number, change: (c: Cohort) => Cohort | undefined): Promise<Cohort> {
    const next = await updateDoc(this.kv, key(team, id), CohortDoc, (c) => {
      const out = change(c)
      return out && CohortDoc.parse({ ...out, updated_at: new Date().toISOString() })
    })
    if (!next) throw new NotFound()
    return next
  }
}

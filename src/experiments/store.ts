import type { KV } from '@nats-io/kv'
import { BUCKETS } from '../../schema/jetstream.ts'
import { bucket, type NatsConnection } from '../jetstream/connection.ts'
import { createDoc, listDocs, nextSequence, readDoc, updateDoc } from '../jetstream/kv-document.ts'
import { experimentFilter, experimentKey, sequenceKey, StoredExperiment } from './document.ts'

/** Experiments, one revision-checked document each, with integer ids per project (as PostHog's). */
export class ExperimentStore {
  constructor(readonly kv: KV) {}

  static async open(nc: NatsConnection): Promise<ExperimentStore> {
    return new ExperimentStore(await bucket(nc, BUCKETS.experiments))
  }

  /** The experiment, deleted ones included; undefined when there is none with this id. */
  async get(teamId: number, id: number): Promise<StoredExperiment | undefined> {
    if (!Number.isSafeInteger(id) || id <= 0) return undefined
    return (await readDoc(this.kv, experimentKey(teamId, id), StoredExperiment))?.doc
  }

  /** The project's experiments that are not deleted, newest first. */
  async list(teamId: number): Promise<StoredExperiment[]> {
    const all = await listDocs(this.kv, experimentFilter(teamId), StoredExperiment)
    return all
      .filter((e) => !e.deleted)
      .sort((a, b) => b.created_at.localeCompare(a.created_at) || b.id - a.id)
  }

  /** Writes a new experiment under the project's next id. */
  async create(e: Omit<StoredExperiment, 'id'>): Promise<StoredExperiment> {
    const id = await nextSequence(this.kv, sequenceKey(e.team_id))
    const doc = StoredExperiment.parse({ ...e, id })
    if (!(await createDoc(this.kv, experimentKey(doc.team_id, id), doc))) {
      throw new Error(`experiment ${doc.team_id}/${id} already exists`)
    }
    return doc
  }

  /**
   * Revision-checked update; `change` may run again after a concurrent write and may throw to
   * refuse the change (nothing is written then).
   */
  update(
    teamId: number,
    id: number,
    change: (current: StoredExperiment) => StoredExperiment,
  ): Promise<StoredExperiment | undefined> {
    return updateDoc(this.kv, experimentKey(teamId, id), StoredExperiment, (cur) =>
      StoredExperiment.parse({ ...change(cur), updated_at: new Date().toISOString() }),
    )
  }
}

import { createHash } from 'node:crypto'
import type { KV } from '@nats-io/kv'
import { z } from 'zod'
import { BUCKETS } from '../../schema/jetstream.ts'
import { ValidationError } from '../http/errors.ts'
import { bucket, type NatsConnection } from '../jetstream/connection.ts'
import { createDoc, listDocs, readDoc, updateDoc } from '../jetstream/kv-document.ts'
import { StoredSurvey, surveyFilter, surveyKey } from './document.ts'

// Surveys in their KV bucket. Names are unique per project (PostHog has a database constraint):
// `name.<team>.<sha1 of name>` holds the id of the survey that owns the name, claimed with a
// create-if-absent write, so two concurrent creates of one name cannot both succeed.

const Reservation = z.object({ id: z.string(), at: z.number() })
// A claim whose survey never got written (its creator died in between) is taken over after this.
const STALE_CLAIM_MS = 30_000

const nameKey = (teamId: number, name: string) =>
  `name.${teamId}.${createHash('sha1').update(name).digest('hex')}`

export class DuplicateName extends ValidationError {
  constructor(message: string) {
    super(message, null, 'unique')
  }
}

/** The surveys of every project, one revision-checked document each. */
export class SurveyStore {
  constructor(readonly kv: KV) {}

  static async open(nc: NatsConnection): Promise<SurveyStore> {
    return new SurveyStore(await bucket(nc, BUCKETS.surveys))
  }

  async get(teamId: number, id: string): Promise<StoredSurvey | undefined> {
    if (!/^[0-9a-f-]{36}$/i.test(id)) return undefined
    return (await readDoc(this.kv, surveyKey(teamId, id.toLowerCase()), StoredSurvey))?.doc
  }

  /** The project's surveys, newest first. */
  async list(teamId: number): Promise<StoredSurvey[]> {
    const all = await listDocs(this.kv, surveyFilter(teamId), StoredSurvey)
    return all.sort((a, b) => b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id))
  }

  /** Claims `name` for survey `id`; throws DuplicateName when another live survey holds it. */
  private async claimName(teamId: number, name: string, id: string, message: string): Promise<void> {
    const key = nameKey(teamId, name)
    for (let attempt = 0; attempt < 20; attempt++) {
      if (await createDoc(this.kv, key, { id, at: Date.now() })) return
      const held = await readDoc(this.kv, key, Reservation)
      if (!held) continue
      if (held.doc.id === id) return
      const holder = await this.get(teamId, held.doc.id)
      const stillHeld = holder ? holder.name === name : Date.now() - held.doc.at < STALE_CLAIM_MS
      if (stillHeld) throw new DuplicateName(message)
      const taken = await updateDoc(this.kv, key, Reservation, (cur) =>
        cur.id === held.doc.id ? { id, at: Date.now() } : undefined,
      )
      if (taken?.id === id) return
    }
    throw new Error(`could not claim survey name in project ${teamId}`)
  }

  private async releaseName(teamId: number, name: string, id: string): Promise<void> {
    const key = nameKey(teamId, name)
    const held = await readDoc(this.kv, key, Reservation)
    if (held?.doc.id !== id) return
    await this.kv.delete(key, { previousSeq: held.revision }).catch(() => undefined)
  }

  /** Writes a new survey; its name must be free in the project. */
  async create(survey: StoredSurvey): Promise<StoredSurvey> {
    const doc = StoredSurvey.parse(survey)
    await this.claimName(doc.team_id, doc.name, doc.id, 'There is already a survey with this name.')
    try {
      if (!(await createDoc(this.kv, surveyKey(doc.team_id, doc.id), doc))) throw new Error('survey id taken')
    } catch (err) {
      await this.releaseName(doc.team_id, doc.name, doc.id)
      throw err
    }
    return doc
  }

  /**
   * Revision-checked update; `change` sees the stored survey and returns the next one (it may run
   * again after a concurrent write). A new name is claimed first and the old one released after.
   */
  async update(
    teamId: number,
    id: string,
    change: (current: StoredSurvey) => StoredSurvey,
  ): Promise<{ before: StoredSurvey; after: StoredSurvey } | undefined> {
    let before: StoredSurvey | undefined
    const current = await this.get(teamId, id)
    if (!current) return undefined
    const renamed = change(current).name
    if (renamed !== current.name) {
      await this.claimName(teamId, renamed, id, 'There is already another survey with this name.')
    }
    const after = await updateDoc(this.kv, surveyKey(teamId, id), StoredSurvey, (cur) => {
      before = cur
      return StoredSurvey.parse(change(cur))
    })
    if (!after || !before) return undefined
    if (before.name !== after.name) await this.releaseName(teamId, before.name, id)
    if (renamed !== after.name) await this.releaseName(teamId, renamed, id)
    return { before, after }
  }

  /** Removes the survey and frees its name; the removed survey, or undefined if there was none. */
  async delete(teamId: number, id: string): Promise<StoredSurvey | undefined> {
    const current = await readDoc(this.kv, surveyKey(teamId, id), StoredSurvey)
    if (!current) return undefined
    await this.kv.delete(surveyKey(teamId, id), { previousSeq: current.revision })
    await this.releaseName(teamId, current.doc.name, id)
    return current.doc
  }
}

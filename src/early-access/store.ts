import type { KV } from '@nats-io/kv'
import { z } from 'zod'
import { BUCKETS } from '../../schema/jetstream.ts'
import { bucket, type NatsConnection } from '../jetstream/connection.ts'
import { createDoc, listDocs, readDoc, updateDoc } from '../jetstream/kv-document.ts'
import { featureFilter, featureKey, flagLinkKey, StoredFeature } from './document.ts'

const FlagLink = z.object({ feature_id: z.string() })

/** Early access features, one revision-checked document each, and the flag each one owns. */
export class EarlyAccessStore {
  constructor(readonly kv: KV) {}

  static async open(nc: NatsConnection): Promise<EarlyAccessStore> {
    return new EarlyAccessStore(await bucket(nc, BUCKETS.earlyAccess))
  }

  async get(teamId: number, id: string): Promise<StoredFeature | undefined> {
    if (!/^[0-9a-f-]{36}$/i.test(id)) return undefined
    return (await readDoc(this.kv, featureKey(teamId, id.toLowerCase()), StoredFeature))?.doc
  }

  /** The project's features, newest first. */
  async list(teamId: number): Promise<StoredFeature[]> {
    const all = await listDocs(this.kv, featureFilter(teamId), StoredFeature)
    return all.sort((a, b) => b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id))
  }

  /** The feature holding flag `flagId`, if one does (a link whose feature is gone counts as free). */
  async featureOfFlag(teamId: number, flagId: number): Promise<StoredFeature | undefined> {
    const link = await readDoc(this.kv, flagLinkKey(teamId, flagId), FlagLink)
    return link ? this.get(teamId, link.doc.feature_id) : undefined
  }

  /** Writes a new feature and links its flag to it; false when the flag is taken meanwhile. */
  async create(feature: StoredFeature): Promise<boolean> {
    const doc = StoredFeature.parse(feature)
    if (doc.feature_flag_id !== null) {
      const linkKey = flagLinkKey(doc.team_id, doc.feature_flag_id)
      if (!(await createDoc(this.kv, linkKey, { feature_id: doc.id }))) {
        // A link left by a deleted feature is free to take over (only the link that was seen).
        const stale = await readDoc(this.kv, linkKey, FlagLink)
        if (!stale || (await this.get(doc.team_id, stale.doc.feature_id))) return false
        const taken = await updateDoc(this.kv, linkKey, FlagLink, (cur) =>
          cur.feature_id === stale.doc.feature_id ? { feature_id: doc.id } : undefined,
        )
        if (taken?.feature_id !== doc.id) return false
      }
    }
    await createDoc(this.kv, featureKey(doc.team_id, doc.id), doc)
    return true
  }

  /** Revision-checked update; `change` may run again after a concurrent write. */
  update(
    teamId: number,
    id: string,
    change: (current: StoredFeature) => StoredFeature,
  ): Promise<StoredFeature | undefined> {
    return updateDoc(this.kv, featureKey(teamId, id), StoredFeature, (cur) =>
      StoredFeature.parse(change(cur)),
    )
  }

  /** Removes the feature and frees its flag; the removed feature, or undefined if there was none. */
  async delete(teamId: number, id: string): Promise<StoredFeature | undefined> {
    const current = await readDoc(this.kv, featureKey(teamId, id), StoredFeature)
    if (!current) return undefined
    await this.kv.delete(featureKey(teamId, id), { previousSeq: current.revision })
    const flagId = current.doc.feature_flag_id
    if (flagId !== null) {
      const link = await readDoc(this.kv, flagLinkKey(teamId, flagId), FlagLink)
      if (link?.doc.feature_id === id) {
        await this.kv
          .delete(flagLinkKey(teamId, flagId), { previousSeq: link.revision })
          .catch(() => undefined)
      }
    }
    return current.doc
  }
}

import type { KV } from '@nats-io/kv'
import { z } from 'zod'
import { createDoc, readDoc, updateDoc } from '../jetstream/kv-document.ts'

// Who watched which recording (PostHog's SessionRecordingViewed), in the recordings bucket: one
// document per session, `v.<team>.<session id, base64url>` = {users: {<user id>: first viewed at}}.

const ViewedDoc = z.object({ users: z.record(z.string(), z.string()) })

const key = (team: number, sessionId: string) =>
  `v.${team}.${Buffer.from(sessionId).toString('base64url') || '='}`

export class ViewedStore {
  constructor(private readonly kv: KV) {}

  /** Marks the session viewed by the user; the first time is kept. */
  async markViewed(team: number, sessionId: string, userId: number): Promise<void> {
    const k = key(team, sessionId)
    const now = new Date().toISOString()
    if (await createDoc(this.kv, k, { users: { [userId]: now } })) return
    await updateDoc(this.kv, k, ViewedDoc, (d) =>
      d.users[userId] ? undefined : { users: { ...d.users, [userId]: now } },
    )
  }

  /** The ids of the users who viewed each session (sessions nobody viewed map to an empty list). */
  async viewers(team: number, sessionIds: string[]): Promise<Map<string, number[]>> {
    const docs = await Promise.all(sessionIds.map((s) => readDoc(this.kv, key(team, s), ViewedDoc)))
    return new Map(sessionIds.map((s, i) => [s, Object.keys(docs[i]?.doc.users ?? {}).map(Number)]))
  }
}

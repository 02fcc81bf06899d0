import type { AccountStore } from '../accounts/store.ts'
import type { ClickHouseClient } from '../clickhouse/client.ts'
import type { PlaylistStore } from '../playlists/store.ts'
import { type PersonResponse, queryPersons } from '../queries/insights/actors/persons.ts'
import { str } from '../queries/insights/common/index.ts'
import { type RecordingBody, recordingBody, unknownRecordingBody } from './serialize.ts'
import { type SessionSummary, summariesById } from './store.ts'
import type { ViewedStore } from './viewed.ts'

// Turns session summaries into PostHog's recording bodies for one user: persons by distinct id,
// viewed marks, other viewers, whether a playlist holds the recording (then retention keeps it).
// Also what the playlist endpoints read (recordings of a playlist, watched counts).

export interface RecordingsReaderDeps {
  ch: ClickHouseClient
  accounts: AccountStore
  viewed: ViewedStore
  playlists: PlaylistStore
  retentionDays: number
}

export class RecordingsReader {
  constructor(private readonly d: RecordingsReaderDeps) {}

  /** Persons of the given distinct ids (ids without a person are absent). */
  async persons(teamId: number, distinctIds: string[]): Promise<Map<string, PersonResponse>> {
    const out = new Map<string, PersonResponse>()
    const ids = [...new Set(distinctIds.filter(Boolean))]
    if (!ids.length) return out
    const where = `p.id IN (SELECT person_id FROM person_distinct_ids WHERE distinct_id IN (${ids.map(str).join(', ')}))`
    for (const p of await queryPersons(this.d.ch, teamId, where, `LIMIT ${ids.length}`, ids.length)) {
      for (const id of p.distinct_ids) out.set(id, p)
    }
    return out
  }

  /** The distinct ids of a person (empty when unknown). */
  async distinctIdsOf(teamId: number, personUuid: string): Promise<string[]> {
    const found = await queryPersons(this.d.ch, teamId, `p.id = toUUID(${str(personUuid)})`, 'LIMIT 1', 1)
    return found[0]?.distinct_ids ?? []
  }

  /** Bodies of the summaries, in their order, as `userId` sees them. */
  async bodies(teamId: number, userId: number, summaries: SessionSummary[]): Promise<RecordingBody[]> {
    const ids = summaries.map((s) => s.session_id)
    const [persons, viewers, pinned] = await Promise.all([
      this.persons(
        teamId,
        summaries.map((s) => s.distinct_id),
      ),
      this.d.viewed.viewers(teamId, ids),
      this.d.playlists.pinned(teamId),
    ])
    const pinnedIds = new Set(pinned.map((p) => p.session_id))
    const emails = new Map<number, string>()
    for (const uid of new Set([...viewers.values()].flat())) {
      if (uid === userId) continue
      const u = await this.d.accounts.getUser(uid)
      if (u) emails.set(uid, u.email)
    }
    const nowMs = Date.now()
    return summaries.map((s) => {
      const who = viewers.get(s.session_id) ?? []
      return recordingBody(s, {
        person: persons.get(s.distinct_id) ?? null,
        viewed: who.includes(userId),
        viewers: who.filter((u) => u !== userId && emails.has(u)).map((u) => emails.get(u)!),
        pinned: pinnedIds.has(s.session_id),
        retentionDays: this.d.retentionDays,
        nowMs,
      })
    })
  }

  /** Bodies by session id; ids without a recording get a body with empty values. */
  async byIds(teamId: number, userId: number, ids: string[]): Promise<Map<string, RecordingBody>> {
    const found = await summariesById(this.d.ch, teamId, ids)
    const bodies = await this.bodies(teamId, userId, [...found.values()])
    const out = new Map(bodies.map((b) => [b.id, b]))
    for (const id of ids) if (!out.has(id)) out.set(id, unknownRecordingBody(id))
    return out
  }

  /** How many of the sessions `userId` has viewed. */
  async watchedCount(teamId: number, userId: number, ids: string[]): Promise<number> {
    const viewers = await this.d.viewed.viewers(teamId, ids)
    return [...viewers.values()].filter((who) => who.includes(userId)).length
  }
}

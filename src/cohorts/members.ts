import type { ClickHouseClient } from '@clickhouse/client'
import { LRUCache } from 'lru-cache'
import { compileHogQL } from '../hogql/index.ts'
import { execute } from '../queries/execute.ts'
import type { Cohort } from './document.ts'

// Which of some cohorts a person (by distinct id) is a member of, by their computed membership:
// what flag evaluation asks for static and behavioural cohorts (src/cohorts/flag-match.ts). One
// query per person and set of cohorts (their current versions), through HogQL; an answer is kept
// for a few seconds, since SDKs ask for flags again and again for the same person, and a cohort's
// calculation or a static cohort's change makes a new key (its version, or the time of the change).

const REMEMBER_MS = 5_000
const MAX_REMEMBERED = 20_000

export class CohortMembership {
  private readonly remembered = new LRUCache<string, ReadonlySet<number>>({
    max: MAX_REMEMBERED,
    ttl: REMEMBER_MS,
  })

  constructor(
    private readonly ch: ClickHouseClient,
    private readonly maxExecutionSeconds = 10,
  ) {}

  /** The ids among `cohorts` whose current members include the person of `distinctId`. */
  async of(teamId: number, distinctId: string, cohorts: Cohort[]): Promise<ReadonlySet<number>> {
    const dynamic = cohorts.filter((c) => !c.is_static && c.version !== null)
    const fixed = cohorts.filter((c) => c.is_static)
    if (!dynamic.length && !fixed.length) return new Set()
    const key = JSON.stringify([
      teamId,
      distinctId,
      dynamic.map((c) => [c.id, c.version]),
      fixed.map((c) => [c.id, c.members_changed_at]),
    ])
    const hit = this.remembered.get(key)
    if (hit) return hit
    const person =
      'person_id IN (SELECT person_id FROM person_distinct_ids WHERE distinct_id = {distinct_id})'
    const parts: string[] = []
    if (dynamic.length) {
      const versions = dynamic.map((c) => `(cohort_id = ${c.id} AND version = ${c.version})`).join(' OR ')
      parts.push(`SELECT DISTINCT cohort_id FROM cohort_people WHERE ${person} AND (${versions})`)
    }
    if (fixed.length) {
      parts.push(
        `SELECT DISTINCT cohort_id FROM static_cohort_people WHERE ${person} AND cohort_id IN (${fixed.map((c) => c.id).join(', ')})`,
      )
    }
    const compiled = await compileHogQL(parts.join(' UNION ALL '), {
      teamId,
      values: { distinct_id: distinctId },
      defaultLimit: cohorts.length + 10,
    })
    const out = await execute(this.ch, compiled, {
      maxExecutionSeconds: this.maxExecutionSeconds,
      maxResultRows: cohorts.length * 2 + 10,
      queryId: `t${teamId}-flag-cohorts-${Math.random().toString(36).slice(2)}`,
    })
    const members = new Set(out.rows.map((r) => Number(r[0])))
    this.remembered.set(key, members)
    return members
  }
}

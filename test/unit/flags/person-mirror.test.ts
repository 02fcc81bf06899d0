import type { ClickHouseClient } from '@clickhouse/client'
import { describe, expect, it } from 'vitest'
import { PersonMirror, TeamPersons } from '../../../src/flags/person-mirror.ts'
import { createLogger } from '../../../src/observability/logger.ts'

// A ClickHouse stand-in answering the mirror's two load queries from fixed rows, counting queries.
function fakeClickHouse(ids: unknown[], persons: unknown[]) {
  const queries: string[] = []
  const ch = {
    queries,
    async query({ query }: { query: string }) {
      queries.push(query)
      const rows = /FROM person_distinct_id/.test(query) ? ids : /FROM person\b/.test(query) ? persons : []
      return { json: async () => rows }
    },
  }
  return ch as unknown as ClickHouseClient & { queries: string[] }
}

describe('TeamPersons', () => {
  it('keeps the highest version of each person and distinct id, whatever the order', () => {
    const t = new TeamPersons()
    t.apply({
      team_id: 1,
      persons: [{ id: 'p1', version: 3, deleted: false, properties: { plan: 'pro' } }],
      distinct_ids: [{ distinct_id: 'd1', person_id: 'p1', version: 1, deleted: false }],
    })
    // an older message arriving late changes nothing
    t.apply({
      team_id: 1,
      persons: [{ id: 'p1', version: 2, deleted: false, properties: { plan: 'free' } }],
      distinct_ids: [],
    })
    expect(t.properties('d1')).toEqual({ plan: 'pro' })
    expect(t.properties('unknown')).toEqual({})
  })

  it('follows a merge: the distinct id moves to the surviving person, the other is deleted', () => {
    const t = new TeamPersons()
    t.setPerson('anon', 0, false, '{"a":1}')
    t.setPerson('known', 0, false, '{"k":1}')
    t.setId('d-anon', 'anon', 0, false)
    t.setId('d-known', 'known', 0, false)
    t.apply({
      team_id: 1,
      persons: [
        { id: 'known', version: 1, deleted: false, properties: { a: 1, k: 1 } },
        { id: 'anon', version: 100, deleted: true },
      ],
      distinct_ids: [{ distinct_id: 'd-anon', person_id: 'known', version: 1, deleted: false }],
    })
    expect(t.properties('d-anon')).toEqual({ a: 1, k: 1 })
    expect(t.properties('d-known')).toEqual({ a: 1, k: 1 })
  })

  it('answers {} for a deleted distinct id or person', () => {
    const t = new TeamPersons()
    t.setPerson('p', 1, false, '{"x":1}')
    t.setId('d', 'p', 1, true)
    expect(t.properties('d')).toEqual({})
    t.setId('d', 'p', 2, false)
    expect(t.properties('d')).toEqual({ x: 1 })
    t.setPerson('p', 2, true, '{}')
    expect(t.properties('d')).toEqual({})
  })
})

describe('PersonMirror', () => {
  it('loads a project once and answers every later lookup from memory', async () => {
    const ch = fakeClickHouse(
      [
        { d: 'a', p: 'p1', v: '1', x: 0 },
        { d: 'b', p: 'p1', v: '1', x: 0 },
      ],
      [{ id: 'p1', props: '{"plan":"pro"}', v: '4', x: 0 }],
    )
    const mirror = new PersonMirror(ch, createLogger('silent'))
    const answers = await Promise.all(['a', 'b', 'stranger', 'a'].map((d) => mirror.properties(7, d)))
    expect(answers).toEqual([{ plan: 'pro' }, { plan: 'pro' }, {}, { plan: 'pro' }])
    for (let i = 0; i < 50; i++) await mirror.properties(7, `x${i}`)
    expect(ch.queries).toHaveLength(2)
  })

  it('reads ClickHouse per request for a project above the size limit', async () => {
    const ids = [1, 2, 3].map((n) => ({ d: `d${n}`, p: 'p', v: '1', x: 0 }))
    const ch = fakeClickHouse(ids, [])
    const mirror = new PersonMirror(ch, createLogger('silent'), { maxDistinctIds: 2 })
    await mirror.properties(7, 'd1')
    await mirror.properties(7, 'd2')
    // the load query, then one person query per request (the existing per-request read)
    expect(ch.queries.filter((q) => /GROUP BY distinct_id LIMIT 3/.test(q))).toHaveLength(1)
    expect(ch.queries.filter((q) => /HAVING argMax\(is_deleted, version\) = 0/.test(q))).toHaveLength(2)
  })
})

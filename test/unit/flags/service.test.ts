import type { ClickHouseClient } from '@clickhouse/client'
import { describe, expect, it } from 'vitest'
import type { FlagCache } from '../../../src/flags/cache.ts'
import { GroupTypeCache } from '../../../src/flags/properties.ts'
import { FlagQuota } from '../../../src/flags/quota.ts'
import { parseFlagRequest } from '../../../src/flags/request.ts'
import { type EvaluationDeps, evaluateRequest } from '../../../src/flags/service.ts'
import { type StoredFlag, storedFlagSchema } from '../../../src/flags/stored-definition.ts'
import { createLogger } from '../../../src/observability/logger.ts'

let nextId = 1
function stored(
  key: string,
  filters: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): StoredFlag {
  return storedFlagSchema.parse({
    id: nextId++,
    key,
    filters,
    team_id: 1,
    version: 1,
    created_at: '2024-01-01T00:00:00Z',
    updated_at: '2024-01-01T00:00:00Z',
    created_by: null,
    ...extra,
  })
}

const FLAGS = [
  stored('plain', { groups: [{ properties: [], rollout_percentage: 100 }] }),
  stored('needs-plan', { groups: [{ properties: [{ key: 'plan', value: 'pro', type: 'person' }] }] }),
  stored('company', {
    aggregation_group_type_index: 0,
    groups: [{ properties: [{ key: 'size', value: '5', type: 'group', group_type_index: 0 }] }],
  }),
  stored('off', { groups: [{ properties: [] }] }, { active: false }),
  stored('gone', { groups: [{ properties: [] }] }, { deleted: true }),
]

// A ClickHouse stand-in: answers from `tables` by the table a query reads, or fails.
function fakeClickHouse(tables: Record<string, unknown[]> | 'down') {
  const queries: string[] = []
  const ch = {
    queries,
    async query({ query }: { query: string }) {
      queries.push(query)
      if (tables === 'down') throw new Error('connection refused')
      const table = /FROM (\w+)/.exec(query)?.[1] ?? ''
      return { json: async () => tables[table] ?? [] }
    },
  }
  return ch as unknown as ClickHouseClient & { queries: string[] }
}

function deps(ch: ClickHouseClient): EvaluationDeps {
  return {
    cache: { flags: () => FLAGS } as unknown as FlagCache,
    ch,
    groupTypes: new GroupTypeCache(ch),
    log: createLogger('silent'),
  }
}

const request = (body: Record<string, unknown>) =>
  parseFlagRequest({ token: 'phc_x', distinct_id: 'u1', ...body }, undefined)

describe('evaluateRequest', () => {
  it('leaves out only the flags whose stored properties could not be read', async () => {
    const { evaluation } = await evaluateRequest(deps(fakeClickHouse('down')), 1, request({}), null)
    expect(Object.keys(evaluation.results)).toEqual(['plain'])
    expect(evaluation.errorsWhileComputingFlags).toBe(true)
    expect(Object.keys(evaluation.errors).sort()).toEqual(['company', 'needs-plan'])
  })

  it('does not query ClickHouse when the request brings every property a flag reads', async () => {
    const ch = fakeClickHouse('down')
    const { evaluation } = await evaluateRequest(
      deps(ch),
      1,
      request({ person_properties: { plan: 'pro' }, flag_keys_to_evaluate: ['plain', 'needs-plan'] }),
      null,
    )
    expect(ch.queries).toEqual([])
    expect(evaluation.errorsWhileComputingFlags).toBe(false)
    expect(evaluation.results['needs-plan']?.enabled).toBe(true)
  })

  it('merges stored properties under request overrides', async () => {
    const ch = fakeClickHouse({
      person: [{ properties: '{"plan":"pro"}', is_deleted: 0 }],
      group_type_mapping: [{ group_type_index: 0, group_type: 'org' }],
      groups: [{ group_type_index: 0, group_key: 'acme', properties: '{"size":5}' }],
    })
    const stored = await evaluateRequest(deps(ch), 1, request({ groups: { org: 'acme' } }), null)
    expect(stored.evaluation.results['needs-plan']?.enabled).toBe(true)
    expect(stored.evaluation.results.company?.enabled).toBe(true)
    const overridden = await evaluateRequest(
      deps(ch),
      1,
      request({
        groups: { org: 'acme' },
        person_properties: { plan: 'free' },
        group_properties: { org: { size: 6 } },
      }),
      null,
    )
    expect(overridden.evaluation.results['needs-plan']?.enabled).toBe(false)
    expect(overridden.evaluation.results.company?.enabled).toBe(false)
  })

  it('never evaluates inactive or deleted flags', async () => {
    const { evaluation, definitions } = await evaluateRequest(deps(fakeClickHouse({})), 1, request({}), null)
    expect(definitions.map((d) => d.key)).not.toContain('off')
    expect(Object.keys(evaluation.results)).not.toContain('gone')
  })
})

describe('parseFlagRequest', () => {
  it('takes api_key, token or the query token, and stringifies ids', () => {
    expect(parseFlagRequest({ api_key: 'a', distinct_id: 7 }, undefined)).toMatchObject({
      token: 'a',
      distinctId: '7',
    })
    expect(parseFlagRequest({ token: 'b', distinct_id: 'd' }, undefined).token).toBe('b')
    expect(parseFlagRequest({ distinct_id: 'd' }, 'q').token).toBe('q')
    expect(parseFlagRequest({ token: 'b', distinct_id: 'd', groups: { org: 5 } }, undefined).groups).toEqual({
      org: '5',
    })
  })

  it('refuses bodies without a key (401) or distinct id (400)', () => {
    expect(() => parseFlagRequest({ distinct_id: 'd' }, undefined)).toThrow(/API key/)
    expect(() => parseFlagRequest({ token: 'x' }, undefined)).toThrow(/distinct_id/)
    expect(() => parseFlagRequest([], undefined)).toThrow(/object/)
  })
})

describe('FlagQuota', () => {
  it('counts per organization in fixed one-minute windows; 0 is unlimited', () => {
    const quota = new FlagQuota(2)
    expect([quota.allow('a', 0), quota.allow('a', 1), quota.allow('a', 2), quota.allow('b', 3)]).toEqual([
      true,
      true,
      false,
      true,
    ])
    expect(quota.allow('a', 60_000)).toBe(true)
    const unlimited = new FlagQuota(0)
    for (let i = 0; i < 1000; i++) expect(unlimited.allow('a', i)).toBe(true)
  })
})

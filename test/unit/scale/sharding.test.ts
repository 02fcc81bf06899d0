import { describe, expect, it } from 'vitest'
import { shardingKey } from '../../../schema/cluster.ts'
import { fairShare } from '../../../src/projectors/partition-leases.ts'

describe('shardingKey', () => {
  it('hashes the ORDER BY columns, each as a string (the key the shards were filled by)', () => {
    expect(
      shardingKey(
        'CREATE TABLE b.person (`id` UUID) ENGINE = ReplacingMergeTree(version) ORDER BY (team_id, id) SETTINGS index_granularity = 8192',
      ),
    ).toBe('cityHash64(toString(team_id), toString(id))')
  })

  it('keeps function calls with commas whole', () => {
    expect(
      shardingKey(
        'CREATE TABLE b.t (`a` Int8) ENGINE = MergeTree ORDER BY (team_id, toStartOfInterval(ts, toIntervalHour(1)), uuid) SETTINGS index_granularity = 8192',
      ),
    ).toBe(
      'cityHash64(toString(team_id), toString(toStartOfInterval(ts, toIntervalHour(1))), toString(uuid))',
    )
  })

  it('takes a single-column ORDER BY', () => {
    expect(
      shardingKey(
        'CREATE TABLE b.m (`version` String) ENGINE = ReplacingMergeTree ORDER BY version SETTINGS x = 1',
      ),
    ).toBe('cityHash64(toString(version))')
  })
})

describe('fairShare', () => {
  it('gives every partition an owner when each member takes its share', () => {
    expect(fairShare(4, 2)).toBe(2)
    expect(fairShare(4, 3)).toBe(2)
    expect(fairShare(8, 3)).toBe(3)
    expect(fairShare(4, 8)).toBe(1)
    expect(fairShare(4, 0)).toBe(4)
  })
})

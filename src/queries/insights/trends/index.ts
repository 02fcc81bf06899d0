import type { QueryKind } from '../../kinds.ts'
import { BREAKDOWN_OTHER } from '../common/index.ts'
import { compileTrends, type TrendsCompiled } from './query.ts'
import { shapeTrends } from './results.ts'
import { trendsBucketCells, trendsBucketValues, trendsRowsOf } from './buckets.ts'
import { TrendsQuerySchema } from './schema.ts'
import { withTestAccounts } from '../../test-accounts.ts'

/**
 * PostHog's TrendsQueryResponse.hasMore (trends_query_runner.py calculate): true when a breakdown
 * has more values than its limit, i.e. an "other" series exists, even when
 * breakdown_hide_other_aggregation hides it. Rows are the compiled statement's (tag, s, c,
 * breakdown, …).
 */
export function trendsHasMore(rows: unknown[][]): boolean {
  return rows.some((r) => r[0] === 'row' && r[3] === BREAKDOWN_OTHER)
}

export const trendsKind: QueryKind = {
  compile: (raw, project, facts) =>
    compileTrends(withTestAccounts(TrendsQuerySchema.parse(raw), project), project, undefined, facts),
  shape: (rows, compiled) => shapeTrends(rows, (compiled as TrendsCompiled).trends),
  hasMore: trendsHasMore,
  buckets: {
    cells: trendsBucketCells,
    skipped: (compiled) => (compiled as TrendsCompiled).trends.skipped,
    values: trendsBucketValues,
    rows: trendsRowsOf,
  },
}

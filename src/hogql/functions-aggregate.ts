import { agg, type FnDef, first, INF } from './function-defs.ts'

// Allow-listed aggregate functions (lookupFunction adds the -If combinator).

/** Aggregates by HogQL name. */
export const AGGREGATE_FUNCTIONS: Record<string, FnDef> = {
  // aggregates
  count: { ...agg('count', 0, 1, 'UInt64'), ci: true },
  countIf: agg('countIf', 1, 2, 'UInt64'),
  uniq: agg('uniq', 1, INF, 'UInt64'),
  uniqExact: agg('uniqExact', 1, INF, 'UInt64'),
  uniqCombined: agg('uniqCombined', 1, INF, 'UInt64'),
  uniqHLL12: agg('uniqHLL12', 1, INF, 'UInt64'),
  sum: { ...agg('sum', 1, 1, first), ci: true },
  avg: { ...agg('avg', 1, 1, 'Float64'), ci: true },
  min: { ...agg('min', 1, 1, first), ci: true },
  max: { ...agg('max', 1, 1, first), ci: true },
  any: agg('any', 1, 1, first),
  anyLast: agg('anyLast', 1, 1, first),
  argMin: agg('argMin', 2, 2, first),
  argMax: agg('argMax', 2, 2, first),
  groupArray: agg('groupArray', 1, 1, (t) => `Array(${t[0] ?? 'Unknown'})`, [0, 1]),
  groupUniqArray: agg('groupUniqArray', 1, 1, (t) => `Array(${t[0] ?? 'Unknown'})`, [0, 1]),
  median: agg('median', 1, 1, 'Float64'),
  quantile: agg('quantile', 1, 1, 'Float64', [1, 1]),
  quantiles: agg('quantiles', 1, 1, 'Array(Float64)', [1, INF]),
  quantileExact: agg('quantileExact', 1, 1, first, [1, 1]),
  quantileTDigest: agg('quantileTDigest', 1, 1, 'Float64', [1, 1]),
  quantileTiming: agg('quantileTiming', 1, 1, 'Float32', [1, 1]),
  stddevPop: agg('stddevPop', 1, 1, 'Float64'),
  stddevSamp: agg('stddevSamp', 1, 1, 'Float64'),
  varPop: agg('varPop', 1, 1, 'Float64'),
  varSamp: agg('varSamp', 1, 1, 'Float64'),
  corr: agg('corr', 2, 2, 'Float64'),
  covarPop: agg('covarPop', 2, 2, 'Float64'),
  covarSamp: agg('covarSamp', 2, 2, 'Float64'),
  topK: agg('topK', 1, 1, (t) => `Array(${t[0] ?? 'Unknown'})`, [1, 1]),
  windowFunnel: agg('windowFunnel', 2, INF, 'UInt8', [1, 1]),
  retention: agg('retention', 1, 32, 'Array(UInt8)'),
  sequenceMatch: agg('sequenceMatch', 2, INF, 'UInt8', [1, 1]),
  sequenceCount: agg('sequenceCount', 2, INF, 'UInt64', [1, 1]),
}

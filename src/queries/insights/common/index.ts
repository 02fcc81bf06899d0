// Shared building blocks of the insight query kinds (trends, lifecycle, stickiness, funnels,
// retention, ...). Each module has one job:
//   time.ts        wall-clock arithmetic in the project's time zone
//   date-range.ts  PostHog's dateRange (relative/absolute, 'all', compare periods) and buckets
//   interval.ts    interval truncation in HogQL, PostHog's labels and `days` strings
//   properties.ts  property filters → HogQL conditions
//   breakdown.ts   breakdown value expressions, top-N with "other"
//   hogql.ts       HogQL literals and compiling inner queries for ClickHouse wrappers
//   series.ts      the events a series (EventsNode) selects, and its label
//   schema.ts      zod schemas of the shared request fields
// Names exported here are stable; import from this file.
export * from './breakdown.ts'
export * from './date-range.ts'
export * from './hogql.ts'
export * from './interval.ts'
export * from './properties.ts'
export * from './schema.ts'
export * from './series.ts'
export * from './time.ts'

import { defineConfig } from 'vitest/config'
import type { ClickHouseFlavor } from './test/harness/clickhouse.ts'

// Unit tests are pure logic and start no servers (`npm run test:unit`, seconds). Integration tests
// run on the ClickHouse `npm start` runs (clickhouse-26.7), and the engine's part of them again on
// the second build (clickhouse-26.7.0: chdb's earlier build of the same release, installed on first
// use; see test/harness/clickhouse.ts for why not 26.5). System tests (test/system: whole processes, the CLI,
// injected faults, abuse) and the scale-out files run on the first.
// Each project starts NATS and ClickHouse servers of its own (globalSetup), and runs its files one
// at a time on them. `npm test` runs the projects in parallel lanes (test/run-suite.ts).
// What the second build runs: the files whose answers the engine decides (HogQL, the query kinds,
// paths, sessions, web analytics) and the wrapper that starts it as a server (stack), which is
// where the two chdb builds differ. While both builds are the same ClickHouse source (26.7.2.1),
// the rest of the integration suite would check nothing the first lane does not, for ~10 more
// minutes of CI on two cores (docs/operations.md, "Which release"). When npm carries a second
// release, its project takes the whole suite again.
const SECOND_BUILD_FILES = [
  'test/integration/hogql/**/*.test.ts',
  'test/integration/queries/**/*.test.ts',
  'test/integration/paths/**/*.test.ts',
  'test/integration/sessions/**/*.test.ts',
  'test/integration/web-analytics/**/*.test.ts',
  'test/integration/stack/**/*.test.ts',
]

const integration = (flavor: ClickHouseFlavor, include = ['test/integration/**/*.test.ts']) => ({
  test: {
    name: `clickhouse-${flavor}`,
    include,
    globalSetup: [`test/harness/setup-clickhouse-${flavor}.ts`],
    // One worker runs the files one after another and loads the source once (isolation off): with
    // isolation each file paid the import of Burrow's whole server again (212 of 1,185 s of a lane,
    // 32 s without). What a file leaves behind is closed or reset by per-file.ts.
    isolate: false,
    setupFiles: ['test/harness/per-file.ts'],
    // generous: the lanes of `npm test` share two cores (a timeout is for a hang, not for speed)
    testTimeout: 120_000,
    hookTimeout: 180_000,
    pool: 'forks' as const,
  },
})

export default defineConfig({
  test: {
    reporters: ['default'],
    projects: [
      // pure logic, no module state worth a fresh import per file
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'], testTimeout: 20_000, isolate: false } },
      integration('26.7'),
      integration('26.7.0', SECOND_BUILD_FILES),
      {
        test: {
          name: 'system',
          include: ['test/system/**/*.test.ts'],
          exclude: ['test/system/scale/**'],
          globalSetup: ['test/harness/setup-clickhouse-26.7.ts'],
          // whole processes started and stopped, on a machine the other lanes keep busy
          testTimeout: 150_000,
          hookTimeout: 180_000,
          pool: 'forks' as const,
        },
      },
      // The stall bounds of issue 40 on the second build too (the abuse rows whose cost falls on
      // ClickHouse: answers, table functions, recordings reads). A vitest run of its own, so no
      // other file's work shares the probes' timing.
      {
        test: {
          name: 'abuse-26.7.0',
          include: ['test/system/abuse/stalls.test.ts'],
          globalSetup: ['test/harness/setup-clickhouse-26.7.0.ts'],
          testTimeout: 150_000,
          hookTimeout: 180_000,
          pool: 'forks' as const,
        },
      },
      // Scale-out (NATS cluster, many processes, shards): real clusters of their own, one file at a
      // time.
      {
        test: {
          name: 'scale',
          include: ['test/system/scale/**/*.test.ts'],
          globalSetup: ['test/harness/setup-clickhouse-26.7.ts'],
          testTimeout: 180_000,
          hookTimeout: 180_000,
          pool: 'forks' as const,
          fileParallelism: false,
        },
      },
    ],
  },
})

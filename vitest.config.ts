import { defineConfig } from 'vitest/config'

// Unit tests are pure logic and start no servers (`npm run test:unit`, seconds). Integration tests
// run twice, once per ClickHouse the project supports: Debian's 18.16 and a current 26.x (chdb
// behind test/harness/chdb). System tests (test/system: whole processes, the CLI, injected faults,
// abuse) run with 18.16; the abuse and fault files run on 26.x too (project system-26): 26.x's
// error texts differ from 18.16's (they quote Burrow's SQL, some carry values, some codes are new)
// and its restarts are another server's. Measured: abuse 26 s and faults 49 s on the chdb server,
// with the machine's load at 5; the rest of test/system proves process behaviour only. The
// cluster mode's file (scale/shards.test.ts) runs there too, on two 26.x shards of its own: the
// SQL Burrow sends through Distributed tables is the release's to accept (25 s, load 3).
// Each project starts NATS and ClickHouse servers of its own (globalSetup), and runs its files one
// at a time on them. `npm test` runs the projects in parallel lanes (test/run-suite.ts).
// BURROW_TEST_CLICKHOUSE=18.16 or =26 runs only one flavor (e.g. while developing).
const integration = (flavor: '18.16' | '26', setup: string) => ({
  test: {
    name: `clickhouse-${flavor}`,
    include: ['test/integration/**/*.test.ts'],
    globalSetup: [setup],
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

const only = process.env.BURROW_TEST_CLICKHOUSE

export default defineConfig({
  test: {
    reporters: ['default'],
    projects: [
      // pure logic, no module state worth a fresh import per file
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'], testTimeout: 20_000, isolate: false } },
      ...(only === '26' ? [] : [integration('18.16', 'test/harness/setup-clickhouse-18.ts')]),
      ...(only === '18.16' ? [] : [integration('26', 'test/harness/setup-clickhouse-26.ts')]),
      ...(only === '26'
        ? []
        : [
            {
              test: {
                name: 'system',
                include: ['test/system/**/*.test.ts'],
                exclude: ['test/system/scale/**'],
                globalSetup: ['test/harness/setup-clickhouse-18.ts'],
                // whole processes started and stopped, on a machine the other lanes keep busy
                testTimeout: 150_000,
                hookTimeout: 180_000,
                pool: 'forks' as const,
              },
            },
          ]),
      // The system files whose proof depends on the ClickHouse release: abuse (26.x's error texts
      // differ from 18.16's and may quote values) and faults (a 26.x server stopped and started).
      ...(only === '18.16'
        ? []
        : [
            {
              test: {
                name: 'system-26',
                include: [
                  'test/system/abuse/**/*.test.ts',
                  'test/system/reliability/faults.test.ts',
                  // cluster mode: two 26.x shards of its own (test/harness/chdb/cluster.ts)
                  'test/system/scale/shards.test.ts',
                ],
                globalSetup: ['test/harness/setup-clickhouse-26.ts'],
                testTimeout: 150_000,
                hookTimeout: 180_000,
                pool: 'forks' as const,
              },
            },
          ]),
      // Scale-out (NATS cluster, many processes, shards): real clusters of their own, run once on
      // 18.16 (their SQL is the schema's, which both flavors' projects test) and one file at a time.
      ...(only === '26'
        ? []
        : [
            {
              test: {
                name: 'scale',
                include: ['test/system/scale/**/*.test.ts'],
                globalSetup: ['test/harness/setup-clickhouse-18.ts'],
                testTimeout: 180_000,
                hookTimeout: 180_000,
                pool: 'forks' as const,
                fileParallelism: false,
              },
            },
          ]),
    ],
  },
})

import { defineConfig } from 'vitest/config'

// Two projects: unit tests are pure logic and start no servers (`npm run test:unit`, seconds);
// integration and system tests share the throw-away NATS and ClickHouse servers of global-setup.
export default defineConfig({
  test: {
    reporters: ['default'],
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts', 'test/system/**/*.test.ts'],
          globalSetup: ['test/harness/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          pool: 'forks',
        },
      },
    ],
  },
})

import type { TestProject } from 'vitest/node'
import { setupStack } from './global-setup.ts'

/** The projects on the ClickHouse `npm start` runs (26.7, test/harness/clickhouse.ts). */
export default (project: TestProject) => setupStack(project, '26.7')

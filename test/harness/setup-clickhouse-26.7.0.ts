import type { TestProject } from 'vitest/node'
import { setupStack } from './global-setup.ts'

/** The projects on chdb's 26.7.0-stable.1 build (test/harness/clickhouse.ts). */
export default (project: TestProject) => setupStack(project, '26.7.0')

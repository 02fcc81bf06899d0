import type { TestProject } from 'vitest/node'
import { setupStack } from './global-setup.ts'

/** The integration project on ClickHouse 26.x (chdb behind test/harness/chdb/server.ts). */
export default (project: TestProject) => setupStack(project, '26')

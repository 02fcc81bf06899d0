import type { TestProject } from 'vitest/node'
import { setupStack } from './global-setup.ts'

/** The integration project on Debian's clickhouse-server 18.16. */
export default (project: TestProject) => setupStack(project, '18.16')

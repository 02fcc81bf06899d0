// The parts of Burrow and the roles they run in; the runtime starts those of the configured role.
import { apiComponent } from './api-routes.ts'
import { captureComponent } from '../capture/index.ts'
import { flagsComponent } from '../flags/index.ts'
import { projectorComponent } from '../projectors/index.ts'
import type { Component } from './types.ts'
import { retentionComponent } from '../clickhouse/retention.ts'
import { sdkComponent } from '../remote-config/component.ts'
import { consoleComponent } from '../console/index.ts'
import { recordingsComponent } from '../recordings/index.ts'

export const COMPONENTS: Component[] = [
  captureComponent,
  flagsComponent,
  apiComponent,
  projectorComponent,
  retentionComponent,
  sdkComponent,
  consoleComponent,
  recordingsComponent,
]

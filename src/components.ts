// The parts of Burrow and the roles they run in; the runtime starts those of the configured role.
import { apiComponent } from './api/index.ts'
import { captureComponent } from './capture/index.ts'
import type { Component } from './runtime.ts'

export const COMPONENTS: Component[] = [captureComponent, apiComponent]

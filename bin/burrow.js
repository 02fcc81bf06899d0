#!/usr/bin/env node
// Burrow runs its TypeScript sources directly through tsx: no build step between a clone and a run.
import { register } from 'tsx/esm/api'

register()
await import('../cmd/burrow.ts')

#!/usr/bin/env node
// Burrow runs its TypeScript compiled ahead of time into a cache keyed by the sources' hash
// (bin/compile.js: built at the first start after a change, about a second), so no build step
// stands between a clone and a run. Where that cache cannot be written, the sources run through tsx.
import process from 'node:process'
import { compiledEntry } from './compile.js'

let entry
try {
  entry = await compiledEntry('cmd/burrow.ts')
} catch (err) {
  process.stderr.write(`burrow: running the sources through tsx (no compiled build: ${String(err)})\n`)
}
if (entry) await import(entry)
else {
  const { register } = await import('tsx/esm/api')
  register()
  await import('../cmd/burrow.ts')
}

// Runs before every test file of the server-backed projects (vitest `setupFiles`). Those projects
// run with isolation off (vitest.config.ts): one worker process loads the source modules once and
// runs file after file, instead of paying the import of Burrow's whole server for every file. What
// a file must not leave to the next is reset here.
import { afterAll, beforeAll } from 'vitest'
import { closeAll } from './closers.ts'
import { setMaterializedProperties } from '../../src/hogql/materialized.ts'

beforeAll(() => {
  // The in-process api refreshes this map from ClickHouse; a file that stopped its Burrow must not
  // leave its columns to the next file's compiler.
  setMaterializedProperties(new Map())
})

afterAll(closeAll)

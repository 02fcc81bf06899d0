// A Burrow with a NATS server and a ClickHouse database of its own, for tests that need the
// projector to run: the default durable consumers would otherwise be shared with every other test
// file that starts a Burrow on the shared servers (see projectors/through-capture.test.ts).
import { join } from 'node:path'
import { afterAll } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import { personProperties } from '../../../src/flags/properties.ts'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import { startNatsServer } from '../../../src/stack/nats-server.ts'
import { freePort } from '../../../src/stack/ports.ts'
import { api, ownDatabase, stack, startTestBurrow, tempDir } from '../../harness/index.ts'

export interface Isolated {
  burrow: RunningBurrow
  project: Project
  /** a `*` personal key of the default user */
  key: string
  call: ReturnType<typeof api>
  /** the person's properties as ClickHouse has them (what flag evaluation reads) */
  personOf(distinctId: string): Promise<Record<string, unknown>>
}

/** Starts the isolated Burrow and a project in it; everything is removed after the file's tests. */
export async function isolatedBurrow(name: string): Promise<Isolated> {
  const { database } = await ownDatabase('burrow_sdk')
  const nats = await startNatsServer({
    bin: stack().bins.nats,
    dataDir: join(tempDir(), 'nats'),
    port: await freePort(),
  })
  const burrow = await startTestBurrow({
    NATS_URL: nats.url,
    CLICKHOUSE_DATABASE: database,
    API_RATE_LIMIT_PER_MINUTE: '100000',
  })
  afterAll(async () => {
    await burrow.stop()
    await nats.stop()
  })
  const accounts = burrow.runtime.accounts
  const admin = await accounts.getUser(1)
  const project = await accounts.createProject({ name, organization_id: admin!.organization_id })
  const { key } = await accounts.createPersonalKey({ user_id: 1, label: name, scopes: ['*'], projects: null })
  return {
    burrow,
    project,
    key,
    call: api(burrow.url, key),
    personOf: (distinctId) => personProperties(burrow.runtime.ch, project.id, distinctId),
  }
}

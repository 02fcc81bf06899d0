import { v4 as uuidv4 } from 'uuid'
import { beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import { clickhouseQueryId } from '../../../src/queries/runner.ts'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import { api, clickhouse, createTestKey, createTestProject, startTestBurrow } from '../../harness/index.ts'
import { insertManyMonths, running as runningIn, until } from './processes.ts'

let burrow: RunningBurrow
let project: Project
let call: ReturnType<typeof api>
const ch = () => clickhouse()

beforeAll(async () => {
  burrow = await startTestBurrow()
  project = await createTestProject('cancel')
  call = api(burrow.url, await createTestKey(['query:read'], [project.id]))
  await insertManyMonths(ch(), project.id)
})

const running = (queryId: string) => runningIn(ch(), queryId)

describe('DELETE /query/{id}/', () => {
  it('streams progress, kills the long-running query in ClickHouse, marks it cancelled and answers 204', async () => {
    const id = `long-${uuidv4()}`
    // 2,000 events × a million array elements, block by block (ClickHouse checks for cancellation
    // between blocks): far longer than this test waits
    const r = await call('POST', `/api/environments/${project.id}/query/`, {
      query: {
        kind: 'HogQLQuery',
        query: 'SELECT count() FROM events a CROSS JOIN events b CROSS JOIN events c',
      },
      refresh: 'force_async',
      client_query_id: id,
    })
    expect(r.status).toBe(200)
    const chId = clickhouseQueryId(project.id, id)
    expect(await until(() => running(chId))).toBe(true)

    // the status stream reports progress while ClickHouse works
    const key = await createTestKey(['query:read'], [project.id])
    const stream = await fetch(`${burrow.url}/api/environments/${project.id}/query/${id}/`, {
      headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' },
    })
    const reader = stream.body!.getReader()
    const statuses: {
      query_progress: { rows_read: number } | null
      error: boolean
      error_message: string | null
    }[] = []
    let buffered = ''
    const readUntil = async (ok: () => boolean) => {
      while (!ok()) {
        const { value, done } = await reader.read()
        if (done) return
        buffered += new TextDecoder().decode(value)
        const blocks = buffered.split('\n\n')
        buffered = blocks.pop()!
        for (const b of blocks.filter((x) => x.startsWith('event: status'))) {
          statuses.push(JSON.parse(b.split('\ndata: ')[1]!).query_status)
        }
      }
    }
    await readUntil(() => statuses.some((st) => (st.query_progress?.rows_read ?? 0) > 0))
    expect(statuses.some((st) => (st.query_progress?.rows_read ?? 0) > 0)).toBe(true)

    const del = await call('DELETE', `/api/environments/${project.id}/query/${id}/`)
    expect(del.status).toBe(204)
    expect(del.text).toBe('')
    expect(await until(async () => !(await running(chId)), 10_000)).toBe(true)

    // the stream ends with the cancelled status
    await readUntil(() => statuses.some((st) => st.error))
    expect(statuses.at(-1)).toMatchObject({ error: true, error_message: 'Query cancelled' })

    const status = await call('GET', `/api/environments/${project.id}/query/${id}/`)
    expect(status.body.query_status).toMatchObject({
      complete: true,
      error: true,
      error_message: 'Query cancelled',
    })
  })
})

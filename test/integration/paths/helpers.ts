/* eslint-disable @typescript-eslint/no-explicit-any -- loosely typed JSON responses */
// Helpers of the PathsQuery tests: a project per case holding the case's events and persons, and
// the query and actors calls on it.
import { randomUUID } from 'node:crypto'
import { expect } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import { api, clickhouse, createTestKey, createTestProject, startTestBurrow } from '../../harness/index.ts'
import { insertEvents, insertOverrides, insertPersons } from '../hogql/fixtures.ts'

export const ONE_MINUTE = 60_000

let burrowUrl: string

/** Starts the Burrow the cases ask (call in beforeAll). */
export async function startPathsBurrow() {
  const burrow = await startTestBurrow({ API_RATE_LIMIT_PER_MINUTE: '100000' })
  burrowUrl = burrow.url
}

export interface Ev {
  person: string
  distinctId?: string
  event?: string
  url?: string
  screen?: string
  ts: string
  properties?: Record<string, unknown>
}

/**
 * A project holding these events; persons get a row each (for the actors), ids from their names.
 * `overrides`: [old, new] person names, old merged into new.
 */
export async function projectWith(name: string, events: Ev[], overrides: [string, string][] = []) {
  const project: Project = await createTestProject(`paths ${name}`)
  const ids = new Map<string, string>()
  const idOf = (p: string) => {
    let id = ids.get(p)
    if (!id) ids.set(p, (id = randomUUID()))
    return id
  }
  await insertEvents(
    clickhouse(),
    events.map((e) => {
      const event = e.event ?? (e.screen !== undefined ? '$screen' : '$pageview')
      const properties = {
        ...(e.url !== undefined ? { $current_url: e.url } : {}),
        ...(e.screen !== undefined ? { $screen_name: e.screen } : {}),
        ...e.properties,
      }
      return {
        team: project.id,
        uuid: randomUUID(),
        event,
        distinctId: e.distinctId ?? e.person,
        personId: idOf(e.person),
        timestamp: e.ts.length === 19 ? `${e.ts}.000` : e.ts,
        properties,
      }
    }),
  )
  await insertPersons(
    clickhouse(),
    [...ids.values()].map((id) => ({
      team: project.id,
      id,
      createdAt: '2020-01-01 00:00:00.000',
      properties: {},
      version: 1,
    })),
  )
  if (overrides.length) {
    await insertOverrides(
      clickhouse(),
      overrides.map(([old, into]) => ({
        team: project.id,
        oldPersonId: idOf(old),
        overridePersonId: idOf(into),
        version: 1,
      })),
    )
  }
  const call = api(burrowUrl, await createTestKey(['query:read'], [project.id]))
  const post = (query: unknown) =>
    call('POST', `/api/environments/${project.id}/query/`, { query, refresh: 'force_blocking' })
  const run = async (query: Record<string, unknown>) => {
    const r = await post({ kind: 'PathsQuery', ...query })
    expect(r.status, r.text).toBe(200)
    return r.body.results as any[]
  }
  /** The person names behind an edge or drop-off, sorted. */
  const people = async (query: Record<string, unknown>, keys: Record<string, string>) => {
    const pathsFilter = { ...((query.pathsFilter as object) ?? {}), ...keys }
    const r = await post({
      kind: 'ActorsQuery',
      source: { kind: 'InsightActorsQuery', source: { kind: 'PathsQuery', ...query, pathsFilter } },
    })
    expect(r.status, r.text).toBe(200)
    const names = new Map([...ids].map(([n, id]) => [id, n]))
    return (r.body.results as any[][]).map((row) => names.get(row[1])).sort()
  }
  const settings = api(burrowUrl, await createTestKey(['project:write'], [project.id]))
  /** PATCHes the project's settings (path_cleaning_filters, say). */
  const patch = (body: Record<string, unknown>) => settings('PATCH', `/api/projects/${project.id}/`, body)
  return { project, run, post, people, patch }
}

/** Edges without their times, for the cases that assert only sources, targets and values. */
export const links = (res: any[]) => res.map((r) => [r.source, r.target, r.value])
export const link = (source: string, target: string, value: number, average_conversion_time: number) => ({
  source,
  target,
  value,
  average_conversion_time,
})

/** Consecutive seconds from `start` (for PostHog's events created one after another). */
export function seconds(start: string) {
  let t = Date.parse(`${start}Z`)
  return () => {
    const s = new Date(t).toISOString().replace('T', ' ').slice(0, 19)
    t += 1000
    return s
  }
}

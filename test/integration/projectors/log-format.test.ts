import { describe, expect, it } from 'vitest'
import { replay } from '../../../src/projectors/replay.ts'
import { clickhouse, createTestProject, nats } from '../../harness/index.ts'
import { ev, replayOptions, rows, runProjector, testLog, waitIdle } from './helpers.ts'

// The log is the truth and outlives releases: messages written in every earlier version of the format
// (1: no top-level person updates; 2: one JSON document) are projected, and replayed, as they were,
// beside what capture writes now (3: one event per line).

const ch = clickhouse()

describe('log format versions', () => {
  it('projects and replays version 1 and 2 messages beside version 3 messages with top-level $set', async () => {
    const log = await testLog(await nats())
    const team = (await createTestProject('log format')).id
    const projector = await runProjector(log, ch, team)
    // Exactly what capture wrote before version 2: `v: 1`, person updates only inside properties.
    const old = ev(team, '$identify', 'fmt-user', { $set: { plan: 'free' } }, '2024-01-01T00:00:00.000Z')
    await log.publishRaw('live', JSON.stringify({ v: 1, team_id: team, lane: 'live', events: [old] }))
    // Version 2: one JSON document; an event may carry $set at its top level.
    const v2 = {
      ...ev(team, '$identify', 'fmt-user', {}, '2024-01-01T12:00:00.000Z'),
      $set: { company: 'acme' },
    }
    await log.publishRaw('live', JSON.stringify({ v: 2, team_id: team, lane: 'live', events: [v2] }))
    // Version 3, as capture writes it now: posthog-js identify, $set at the top level of the event.
    const current = {
      ...ev(team, '$identify', 'fmt-user', {}, '2024-01-02T00:00:00.000Z'),
      $set: { email: 'fmt@x.io' },
    }
    const seq = await log.publish('live', [current])
    await waitIdle(log, projector)
    await projector.stop()

    const view = async (tables = { events: 'events', person: 'person' }) => ({
      events: await rows<{ event: string; properties: string }>(
        ch,
        `SELECT event, properties FROM ${tables.events} WHERE team_id = ${team} ORDER BY timestamp`,
      ),
      persons: (
        await rows<{ p: string }>(
          ch,
          `SELECT argMax(properties, version) AS p FROM ${tables.person} WHERE team_id = ${team} GROUP BY id`,
        )
      ).map((x) => JSON.parse(x.p)),
    })
    const live = await view()
    expect(live.events.map((e) => JSON.parse(e.properties).$set)).toEqual([
      { plan: 'free' },
      { company: 'acme' },
      { email: 'fmt@x.io' },
    ])
    expect(live.persons).toHaveLength(1)
    expect(live.persons[0]).toMatchObject({ plan: 'free', company: 'acme', email: 'fmt@x.io' })

    // Built into tables of its own and left unswapped (`to`): the live tables are shared with other files.
    const r = await replay({
      ...replayOptions(log, ch, team),
      durablePrefix: `${log.prefix}-projector`,
      to: seq,
    })
    expect(r.swapped).toBe(false)
    expect(r.events).toBe(3)
    const replayed = await view({ events: r.tables.events!, person: r.tables.person! })
    for (const t of Object.values(r.tables)) await ch.command({ query: `DROP TABLE IF EXISTS ${t}` })
    expect(replayed.events).toEqual(live.events)
    expect(replayed.persons).toEqual(live.persons)
  })
})

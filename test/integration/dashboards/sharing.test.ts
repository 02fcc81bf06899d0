// Sharing, red-team style: a dashboard shared through /dashboards/{id}/sharing/ is served read-only
// at /shared/<token> without a key; it is gone at once when sharing is turned off or the token
// rotated, on every process; and the token opens nothing but its own dashboard.
import { beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import {
  api,
  createTestKey,
  createTestProject,
  startTestBurrow,
  WITHOUT_PROJECTOR,
} from '../../harness/index.ts'

let burrow: RunningBurrow
let second: RunningBurrow
let project: Project
let other: Project
let call: ReturnType<typeof api>

const trends = (event: string) => ({
  kind: 'InsightVizNode',
  source: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event }], dateRange: { date_from: '-7d' } },
})

const SHARING_FIELDS = [
  'access_token',
  'created_at',
  'enabled',
  'password_required',
  'settings',
  'share_passwords',
]

/** A request without any key. */
const anon = (url: string, init: RequestInit = {}) => fetch(url, { ...init, redirect: 'manual' })

let dashboard: { id: number }
let shownInsight: { id: number; short_id: string }
let hiddenInsight: { id: number; short_id: string }
let otherDashboard: { id: number }

beforeAll(async () => {
  burrow = await startTestBurrow({ API_RATE_LIMIT_PER_MINUTE: '100000' })
  // a second api process on the same NATS and ClickHouse (no projector)
  second = await startTestBurrow({ API_RATE_LIMIT_PER_MINUTE: '100000' }, WITHOUT_PROJECTOR)
  project = await createTestProject('sharing')
  other = await createTestProject('sharing other')
  call = api(burrow.url, await createTestKey(['*']))
  const p = `/api/projects/${project.id}`
  dashboard = (await call('POST', `${p}/dashboards/`, { name: 'Shared one' })).body
  otherDashboard = (await call('POST', `${p}/dashboards/`, { name: 'Private one' })).body
  shownInsight = (
    await call('POST', `${p}/insights/`, {
      name: 'Shown',
      query: trends('$pageview'),
      dashboards: [dashboard.id],
    })
  ).body
  hiddenInsight = (
    await call('POST', `${p}/insights/`, {
      name: 'Secret insight',
      query: trends('secret'),
      dashboards: [otherDashboard.id],
    })
  ).body
  await call('PATCH', `${p}/dashboards/${dashboard.id}/`, { tiles: [{ text: { body: 'Hello, readers' } }] })
})

const sharing = (id: number) => `/api/projects/${project.id}/dashboards/${id}/sharing/`

describe('sharing a dashboard', () => {
  it('starts unshared, with an unsaved configuration', async () => {
    const r = await call('GET', sharing(dashboard.id))
    expect(r.status).toBe(200)
    expect(Object.keys(r.body).sort()).toEqual(SHARING_FIELDS)
    expect(r.body).toMatchObject({
      enabled: false,
      created_at: null,
      password_required: false,
      share_passwords: [],
    })
    expect((await call('GET', `/api/projects/${project.id}/dashboards/999999/sharing/`)).status).toBe(404)
  })

  it('is served without a key once enabled, and gone at once (on every process) when turned off', async () => {
    const on = await call('PATCH', sharing(dashboard.id), { enabled: true })
    expect(on.status).toBe(200)
    expect(on.body.enabled).toBe(true)
    const token: string = on.body.access_token
    expect(token).toMatch(/^[A-Za-z0-9_-]{30}$/)
    expect((await call('GET', sharing(dashboard.id))).body).toMatchObject({
      enabled: true,
      access_token: token,
    })
    expect(
      (await call('GET', `/api/projects/${project.id}/dashboards/${dashboard.id}/`)).body.is_shared,
    ).toBe(true)

    for (const base of [burrow.url, second.url]) {
      const page = await anon(`${base}/shared/${token}`)
      expect(page.status).toBe(200)
      expect(page.headers.get('content-type')).toContain('text/html')
      expect(page.headers.get('cache-control')).toBe('no-store')
      const data = await anon(`${base}/shared/${token}.json`)
      expect(data.status).toBe(200)
      const body = await data.json()
      expect(body).toMatchObject({
        type: 'scene',
        accessToken: token,
        dashboard: { id: dashboard.id, name: 'Shared one' },
      })
      expect(body.dashboard.effective_privilege_level).toBe(21)
      const insights = body.dashboard.tiles.map(
        (t: { insight: { id: number } | null }) => t.insight?.id ?? null,
      )
      expect(insights.sort()).toEqual([shownInsight.id, null].sort())
      // no user details on a public page
      expect(JSON.stringify(body)).not.toContain('@')
    }

    const off = await call('PATCH', sharing(dashboard.id), { enabled: false })
    expect(off.body).toMatchObject({ enabled: false, access_token: token })
    // the very next request, on either process
    for (const base of [second.url, burrow.url]) {
      expect((await anon(`${base}/shared/${token}.json`)).status).toBe(404)
      expect((await anon(`${base}/shared/${token}`)).status).toBe(404)
    }
    // on again: the same link works again
    await call('PATCH', sharing(dashboard.id), { enabled: true })
    expect((await anon(`${second.url}/shared/${token}.json`)).status).toBe(200)
  })

  it('a rotated token replaces the old one at once', async () => {
    const before = (await call('GET', sharing(dashboard.id))).body.access_token
    const rotated = await call('POST', `${sharing(dashboard.id)}refresh/`)
    expect(rotated.status).toBe(200)
    expect(rotated.body.access_token).not.toBe(before)
    expect(rotated.body.enabled).toBe(true)
    expect((await anon(`${second.url}/shared/${before}.json`)).status).toBe(404)
    expect((await anon(`${second.url}/shared/${rotated.body.access_token}.json`)).status).toBe(200)
  })

  it('the token opens nothing but its own dashboard', async () => {
    const token: string = (await call('GET', sharing(dashboard.id))).body.access_token
    const data = await (await anon(`${burrow.url}/shared/${token}.json`)).json()
    const text = JSON.stringify(data)
    // not the other dashboard, not its insight
    expect(text).not.toContain('Secret insight')
    expect(text).not.toContain(hiddenInsight.short_id)
    expect(text).not.toContain('Private one')
    // not a credential anywhere else: as a bearer, as personal_api_key, as a project token
    const p = `/api/projects/${project.id}`
    for (const path of [
      `${p}/dashboards/${dashboard.id}/`,
      `${p}/insights/`,
      `${p}/dashboards/${otherDashboard.id}/`,
    ]) {
      expect(
        (await anon(`${burrow.url}${path}`, { headers: { authorization: `Bearer ${token}` } })).status,
      ).toBe(401)
      expect((await anon(`${burrow.url}${path}?personal_api_key=${token}`)).status).toBe(401)
      expect((await anon(`${burrow.url}${path}?sharing_access_token=${token}`)).status).toBe(401)
    }
    expect(
      (await anon(`${burrow.url}/api/projects/${project.id}/insights/?sharing_access_token=${token}`)).status,
    ).toBe(401)
    // the shared URL takes no parameters that widen it
    const override = await anon(
      `${burrow.url}/shared/${token}.json?filters_override=${encodeURIComponent('{"date_from":"-1000d"}')}&refresh=force_blocking&dashboard=${otherDashboard.id}`,
    )
    const o = await override.json()
    expect(o.dashboard.id).toBe(dashboard.id)
    expect(o.dashboard.filters).toEqual({})
    expect(JSON.stringify(o)).not.toContain('Secret insight')
    // made-up, truncated, padded, traversing and other-kind tokens open nothing
    for (const bad of [
      token.slice(0, -1),
      `${token}x`,
      token.toUpperCase(),
      `${token}%2F..%2F..%2Fapi`,
      '..%2F..%2Fapi%2Fprojects',
      'a'.repeat(30),
      project.api_token,
    ]) {
      const r = await anon(`${burrow.url}/shared/${bad}.json`)
      expect([404, 400]).toContain(r.status)
    }
    // an insight removed from the dashboard disappears from its shared view
    await call('PATCH', `${p}/insights/${shownInsight.id}/`, { dashboards: [] })
    const without = await (await anon(`${burrow.url}/shared/${token}.json`)).json()
    expect(without.dashboard.tiles.every((t: { insight: unknown }) => t.insight === null)).toBe(true)
    await call('PATCH', `${p}/insights/${shownInsight.id}/`, { dashboards: [dashboard.id] })
    // a soft-deleted dashboard is no longer shared
    await call('PATCH', `${p}/dashboards/${dashboard.id}/`, { deleted: true })
    expect((await anon(`${burrow.url}/shared/${token}.json`)).status).toBe(404)
    await call('PATCH', `${p}/dashboards/${dashboard.id}/`, { deleted: false })
    expect((await anon(`${burrow.url}/shared/${token}.json`)).status).toBe(200)
  })

  it("another project's key cannot change this project's sharing", async () => {
    const onlyOther = api(burrow.url, await createTestKey(['*'], [other.id]))
    expect((await onlyOther('PATCH', sharing(dashboard.id), { enabled: false })).status).toBe(404)
    expect(
      (await onlyOther('GET', `/api/projects/${other.id}/dashboards/${dashboard.id}/sharing/`)).status,
    ).toBe(404)
    const reader = api(burrow.url, await createTestKey(['sharing_configuration:read']))
    expect((await reader('GET', sharing(dashboard.id))).status).toBe(200)
    expect((await reader('PATCH', sharing(dashboard.id), { enabled: false })).status).toBe(403)
    expect((await call('PATCH', sharing(dashboard.id), { password_required: true })).status).toBe(403)
  })

  it('an insight can be shared alone', async () => {
    const p = `/api/projects/${project.id}`
    const on = await call('PATCH', `${p}/insights/${shownInsight.id}/sharing/`, { enabled: true })
    expect(on.status).toBe(200)
    const data = await (await anon(`${burrow.url}/shared/${on.body.access_token}.json`)).json()
    expect(data).toMatchObject({ type: 'scene', insight: { id: shownInsight.id, name: 'Shown' } })
    expect(data.dashboard).toBeUndefined()
    await call('PATCH', `${p}/insights/${shownInsight.id}/sharing/`, { enabled: false })
    expect((await anon(`${burrow.url}/shared/${on.body.access_token}.json`)).status).toBe(404)
  })
})

import { setTimeout as sleep } from 'node:timers/promises'
import { v4 as uuidv4 } from 'uuid'
import { beforeAll, describe, expect, it } from 'vitest'
import { type Env, managementEnv, secondUser } from '../../harness/management.ts'
import { postSnapshots, rr, until } from '../recordings/helpers.ts'

let env: Env
let base: string

beforeAll(async () => {
  env = await managementEnv()
  base = `/api/environments/${env.project.id}/session_recording_playlists/`
})

const USER_FIELDS = [
  'id',
  'uuid',
  'distinct_id',
  'first_name',
  'last_name',
  'email',
  'is_email_verified',
  'hedgehog_config',
  'role_at_organization',
].sort()

const PLAYLIST_FIELDS = [
  'id',
  'short_id',
  'name',
  'derived_name',
  'description',
  'pinned',
  'created_at',
  'created_by',
  'deleted',
  'filters',
  'last_modified_at',
  'last_modified_by',
  'recordings_counts',
].sort()

describe('session recording playlists', () => {
  it('creates (201) with exactly the spec fields and retrieves by short_id under both prefixes', async () => {
    const r = await env.call('POST', base, {
      name: 'Checkout bugs',
      description: 'sessions that failed at checkout',
      pinned: true,
      filters: { events: [{ id: '$pageview' }] },
      short_id: 'ignored', // read-only
    })
    expect(r.status).toBe(201)
    expect(Object.keys(r.body).sort()).toEqual(PLAYLIST_FIELDS)
    expect(r.body).toMatchObject({
      name: 'Checkout bugs',
      derived_name: null,
      description: 'sessions that failed at checkout',
      pinned: true,
      deleted: false,
      filters: { events: [{ id: '$pageview' }] },
      recordings_counts: { collection: { count: 0, watched_count: 0 } },
    })
    expect(r.body.short_id).toMatch(/^[A-Za-z0-9]{8}$/)
    expect(r.body.short_id).not.toBe('ignored')
    expect(Number.isInteger(r.body.id)).toBe(true)
    expect(Object.keys(r.body.created_by).sort()).toEqual(USER_FIELDS)
    expect(r.body.created_by).toMatchObject({ id: 1, email: 'admin@localhost', hedgehog_config: null })
    expect(r.body.last_modified_by).toEqual(r.body.created_by)
    expect(new Date(r.body.created_at).toISOString()).toBe(r.body.created_at)

    const viaEnv = await env.call('GET', `${base}${r.body.short_id}/`)
    expect(viaEnv.status).toBe(200)
    expect(viaEnv.body).toEqual(r.body)
    const viaProjects = await env.call(
      'GET',
      `/api/projects/${env.project.id}/session_recording_playlists/${r.body.short_id}/`,
    )
    expect(viaProjects.body).toEqual(r.body)
    expect((await env.call('GET', `${base}nope1234/`)).status).toBe(404)
  })

  it('validates bodies with PostHog-shaped 400s', async () => {
    const r = await env.call('POST', base, { name: 5 })
    expect(r.status).toBe(400)
    expect(r.body).toMatchObject({ type: 'validation_error', code: 'invalid_input', attr: 'name' })
    expect((await env.call('POST', base, { pinned: 'yes' })).status).toBe(400)
  })

  it('PATCHes writable fields and moves last_modified_* to the editor', async () => {
    const created = (await env.call('POST', base, { name: 'to edit' })).body
    const other = await secondUser(env.burrow, `editor-${uuidv4()}@example.com`)
    await sleep(5)
    const r = await other.call('PATCH', `${base}${created.short_id}/`, {
      description: 'now described',
      derived_name: 'Derived',
      filters: null,
    })
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({
      name: 'to edit',
      description: 'now described',
      derived_name: 'Derived',
      filters: null,
      created_by: { id: 1 },
      last_modified_by: { id: other.user.id, email: other.user.email, first_name: 'Second' },
    })
    expect(r.body.created_at).toBe(created.created_at)
    expect(r.body.last_modified_at > created.last_modified_at).toBe(true)
    expect((await env.call('GET', `${base}${created.short_id}/`)).body).toEqual(r.body)
    expect((await env.call('PATCH', `${base}nope1234/`, { name: 'x' })).status).toBe(404)
  })

  it('soft-deletes by PATCH deleted:true: gone from list and retrieve, back with deleted:false', async () => {
    const p = (await env.call('POST', base, { name: 'soon deleted' })).body
    const del = await env.call('PATCH', `${base}${p.short_id}/`, { deleted: true })
    expect(del.status).toBe(200)
    expect(del.body.deleted).toBe(true)
    expect((await env.call('GET', `${base}${p.short_id}/`)).status).toBe(404)
    const list = await env.call('GET', `${base}?limit=1000`)
    expect(list.body.results.map((x: { short_id: string }) => x.short_id)).not.toContain(p.short_id)
    expect((await env.call('GET', `${base}?short_id=${p.short_id}`)).body.count).toBe(0)
    expect((await env.call('POST', `${base}${p.short_id}/recordings/s1/`)).status).toBe(404)

    const back = await env.call('PATCH', `${base}${p.short_id}/`, { deleted: false })
    expect(back.status).toBe(200)
    expect((await env.call('GET', `${base}${p.short_id}/`)).status).toBe(200)
  })

  it('refuses DELETE with 405 and no body', async () => {
    const p = (await env.call('POST', base, { name: 'undeletable' })).body
    const r = await env.call('DELETE', `${base}${p.short_id}/`)
    expect(r.status).toBe(405)
    expect(r.text).toBe('')
    expect(r.headers.get('allow')).toBe('GET, PATCH')
    expect((await env.call('GET', `${base}${p.short_id}/`)).status).toBe(200)
    // Authentication still comes first.
    const readOnly = await env.as(['session_recording_playlist:read'])
    expect((await readOnly('DELETE', `${base}${p.short_id}/`)).status).toBe(403)
  })

  it('enforces scopes (write implies read) and project access', async () => {
    const none = await env.as(['query:read'])
    const denied = await none('GET', base)
    expect(denied.status).toBe(403)
    expect(denied.body.detail).toContain('session_recording_playlist:read')
    const reader = await env.as(['session_recording_playlist:read'])
    expect((await reader('GET', base)).status).toBe(200)
    const cannotWrite = await reader('POST', base, { name: 'x' })
    expect(cannotWrite.status).toBe(403)
    expect(cannotWrite.body.detail).toContain('session_recording_playlist:write')
    const writer = await env.as(['session_recording_playlist:write'])
    expect((await writer('POST', base, { name: 'by writer' })).status).toBe(201)
    expect((await writer('GET', base)).status).toBe(200)

    // A key limited to another project sees 404 here, for every method.
    const elsewhere = await env.as(['*'], [env.other.id])
    const p = (await env.call('POST', base, { name: 'private' })).body
    expect((await elsewhere('GET', base)).status).toBe(404)
    expect((await elsewhere('GET', `${base}${p.short_id}/`)).status).toBe(404)
    expect((await elsewhere('PATCH', `${base}${p.short_id}/`, { name: 'hijack' })).status).toBe(404)
    expect((await elsewhere('DELETE', `${base}${p.short_id}/`)).status).toBe(404)
    // A playlist of one project is not reachable through another project's path either.
    const otherBase = `/api/environments/${env.other.id}/session_recording_playlists/`
    expect((await env.call('GET', `${otherBase}${p.short_id}/`)).status).toBe(404)
    expect((await env.call('GET', base, undefined, { authorization: '' })).status).toBe(401)
  })
})

describe('listing playlists', () => {
  let project: number
  let listBase: string
  const names = ['alpha', 'Bravo', 'charlie', 'delta', 'Echo', 'foxtrot', 'golf']

  beforeAll(async () => {
    // A project of its own so counts are exact.
    const { createTestProject } = await import('../../harness/index.ts')
    project = (await createTestProject('listing')).id
    listBase = `/api/environments/${project}/session_recording_playlists/`
    for (const [i, name] of names.entries()) {
      await env.call('POST', listBase, {
        name,
        pinned: i % 3 === 0,
        derived_name: i === 6 ? 'Special one' : null,
      })
      await sleep(3)
    }
  })

  it('pages with count/next/previous across pages, newest change first by default', async () => {
    const first = await env.call('GET', `${listBase}?limit=3`)
    expect(first.status).toBe(200)
    expect(first.body.count).toBe(7)
    expect(first.body.previous).toBeNull()
    expect(first.body.results.map((p: { name: string }) => p.name)).toEqual(['golf', 'foxtrot', 'Echo'])
    const next = new URL(first.body.next)
    expect(next.pathname).toBe(listBase)
    expect(next.searchParams.get('offset')).toBe('3')
    expect(next.searchParams.get('limit')).toBe('3')

    const second = await env.call('GET', `${next.pathname}${next.search}`)
    expect(second.body.results.map((p: { name: string }) => p.name)).toEqual(['delta', 'charlie', 'Bravo'])
    expect(new URL(second.body.previous).searchParams.get('offset')).toBe('0')
    const third = await env.call('GET', `${listBase}?limit=3&offset=6`)
    expect(third.body.results.map((p: { name: string }) => p.name)).toEqual(['alpha'])
    expect(third.body.next).toBeNull()
    expect(new URL(third.body.previous).searchParams.get('offset')).toBe('3')

    for (const bad of ['limit=-1', 'limit=abc', 'offset=-5', 'limit=1.5', 'limit=5000']) {
      const r = await env.call('GET', `${listBase}?${bad}`)
      expect(r.status, bad).toBe(400)
      expect(r.body.type).toBe('validation_error')
    }
  })

  it('filters by pinned, search, short_id, created_by and orders by a field', async () => {
    const pinned = await env.call('GET', `${listBase}?pinned=true`)
    expect(pinned.body.results.map((p: { name: string }) => p.name).sort()).toEqual([
      'alpha',
      'delta',
      'golf',
    ])
    const unpinned = await env.call('GET', `${listBase}?pinned=false`)
    expect(unpinned.body.count).toBe(4)

    // Case-insensitive, on name or derived_name.
    const search = await env.call('GET', `${listBase}?search=ECH`)
    expect(search.body.results.map((p: { name: string }) => p.name)).toEqual(['Echo'])
    const derived = await env.call('GET', `${listBase}?search=special`)
    expect(derived.body.results.map((p: { name: string }) => p.name)).toEqual(['golf'])

    const byName = await env.call('GET', `${listBase}?order=name`)
    expect(byName.body.results.map((p: { name: string }) => p.name)).toEqual([
      'alpha',
      'Bravo',
      'charlie',
      'delta',
      'Echo',
      'foxtrot',
      'golf',
    ])
    const oldest = await env.call('GET', `${listBase}?order=created_at&limit=1`)
    expect(oldest.body.results[0].name).toBe('alpha')
    expect((await env.call('GET', `${listBase}?order=password`)).status).toBe(400)

    const one = byName.body.results[2]
    const byShort = await env.call('GET', `${listBase}?short_id=${one.short_id}`)
    expect(byShort.body.results).toEqual([one])

    const second = await secondUser(env.burrow, `creator-${uuidv4()}@example.com`)
    const mine = (await second.call('POST', listBase, { name: 'by second user' })).body
    const byCreator = await env.call('GET', `${listBase}?created_by=${second.user.id}`)
    expect(byCreator.body.count).toBe(1)
    expect(byCreator.body.results[0].short_id).toBe(mine.short_id)
    expect((await env.call('GET', `${listBase}?created_by=1`)).body.count).toBe(7)
  })
})

describe('concurrent PATCHes', () => {
  it('never lose an update: every field written concurrently survives', async () => {
    const playlists = await Promise.all(
      [0, 1, 2, 3, 4, 5].map(async (i) => (await env.call('POST', base, { name: `race ${i}` })).body),
    )
    const patches = (i: number) => [
      { name: `renamed ${i}` },
      { derived_name: `derived ${i}` },
      { description: `described ${i}` },
      { pinned: true },
      { filters: { n: i } },
    ]
    const results = await Promise.all(
      playlists.flatMap((p, i) => patches(i).map((body) => env.call('PATCH', `${base}${p.short_id}/`, body))),
    )
    expect(results.map((r) => r.status)).toEqual(new Array(30).fill(200))
    for (const [i, p] of playlists.entries()) {
      const now = (await env.call('GET', `${base}${p.short_id}/`)).body
      expect(now).toMatchObject({
        name: `renamed ${i}`,
        derived_name: `derived ${i}`,
        description: `described ${i}`,
        pinned: true,
        filters: { n: i },
      })
    }
  })
})

describe('playlist recordings', () => {
  const sessionA = `session-${uuidv4()}`
  const sessionB = `session-${uuidv4()}`
  // recent, so that no retention pass of the test run removes it
  const t0 = Math.floor((Date.now() - 3_600_000) / 1000) * 1000

  beforeAll(async () => {
    // a real recording of session A, sent as posthog-js sends it (two requests, one per window)
    const post = (window: string, events: object[]) =>
      postSnapshots(env.burrow.url, env.project.api_token, [
        { session: sessionA, window, distinctId: 'user-a', events },
      ])
    expect(
      (await post('w1', [rr.meta(t0 + 250, 'https://x.io/'), rr.full(t0 + 250), rr.click(t0 + 30_000)]))
        .status,
    ).toBe(200)
    expect((await post('w2', [rr.full(t0 + 60_000), rr.click(t0 + 120_500)])).status).toBe(200)
    // both requests projected: the two windows reach the recording apart, and the list below reads both
    const end = new Date(t0 + 120_500).toISOString()
    await until(
      async () => {
        const r = await env.call('GET', `/api/environments/${env.project.id}/session_recordings/${sessionA}/`)
        return r.status === 200 && r.body.end_time === end ? true : undefined
      },
      30_000,
      'the recording',
    )
  })

  it('adds, lists (as the recordings API shows them) and removes recordings', async () => {
    const p = (await env.call('POST', base, { name: 'collection' })).body
    const add = await env.call('POST', `${base}${p.short_id}/recordings/${sessionA}/`)
    expect(add.status).toBe(200)
    expect(add.body).toEqual({ success: true })
    await sleep(5)
    // Body fields are accepted (as the spec lists them) and ignored.
    const addB = await env.call('POST', `${base}${p.short_id}/recordings/${sessionB}/`, { name: 'ignored' })
    expect(addB.status).toBe(200)
    // Adding again is a no-op.
    expect((await env.call('POST', `${base}${p.short_id}/recordings/${sessionA}/`)).status).toBe(200)

    const got = await env.call('GET', `${base}${p.short_id}/`)
    expect(got.body.recordings_counts).toEqual({ collection: { count: 2, watched_count: 0 } })

    const list = await env.call('GET', `${base}${p.short_id}/recordings/`)
    expect(list.status).toBe(200)
    expect(list.body).toMatchObject({ count: 2, next: null, previous: null, has_next: false })
    const [b, a] = list.body.results
    expect(b).toMatchObject({
      id: sessionB,
      distinct_id: null,
      start_time: null,
      end_time: null,
      recording_duration: 0,
      click_count: 0,
    })
    expect(a).toMatchObject({
      id: sessionA,
      distinct_id: 'user-a',
      start_time: new Date(t0 + 250).toISOString(),
      end_time: new Date(t0 + 120_500).toISOString(),
      recording_duration: 120,
      click_count: 2,
      start_url: 'https://x.io/',
    })
    expect(a.added_at < b.added_at).toBe(true)

    const paged = await env.call('GET', `${base}${p.short_id}/recordings/?limit=1`)
    expect(paged.body.results.map((r: { id: string }) => r.id)).toEqual([sessionB])
    expect(paged.body.has_next).toBe(true)
    expect(new URL(paged.body.next).searchParams.get('offset')).toBe('1')

    const holding = await env.call('GET', `${base}?session_recording_id=${sessionA}`)
    expect(holding.body.results.map((x: { short_id: string }) => x.short_id)).toEqual([p.short_id])
    const listed = (await env.call('GET', `${base}?short_id=${p.short_id}`)).body.results[0]
    expect(listed.recordings_counts).toEqual({ collection: { count: 2, watched_count: 0 } })

    const removed = await env.call('DELETE', `${base}${p.short_id}/recordings/${sessionA}/`)
    expect(removed.status).toBe(200)
    expect(removed.body).toEqual({ success: true })
    expect((await env.call('DELETE', `${base}${p.short_id}/recordings/${sessionA}/`)).status).toBe(404)
    const after = await env.call('GET', `${base}${p.short_id}/recordings/`)
    expect(after.body.results.map((r: { id: string }) => r.id)).toEqual([sessionB])
  })

  it('checks scopes and the playlist on recording routes', async () => {
    const p = (await env.call('POST', base, { name: 'guarded' })).body
    const reader = await env.as(['session_recording_playlist:read'])
    expect((await reader('GET', `${base}${p.short_id}/recordings/`)).status).toBe(200)
    expect((await reader('POST', `${base}${p.short_id}/recordings/x/`)).status).toBe(403)
    expect((await reader('DELETE', `${base}${p.short_id}/recordings/x/`)).status).toBe(403)
    expect((await (await env.as(['query:read']))('GET', `${base}${p.short_id}/recordings/`)).status).toBe(403)
    expect((await env.call('GET', `${base}nope1234/recordings/`)).status).toBe(404)
    expect((await env.call('POST', `${base}nope1234/recordings/x/`)).status).toBe(404)
    const elsewhere = await env.as(['*'], [env.other.id])
    expect((await elsewhere('GET', `${base}${p.short_id}/recordings/`)).status).toBe(404)
  })
})

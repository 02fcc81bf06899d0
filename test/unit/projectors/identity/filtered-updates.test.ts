// Person updates PostHog leaves out (its FILTERED_PERSON_UPDATE_PROPERTIES, PERSON_EVENTS and
// NO_PERSON_UPDATE_EVENTS in nodejs/src/common/persons): the cases of its person-update tests, applied
// per event (src/projectors/identity/property-updates.ts, docs/identity.md "Updates PostHog filters").
import { describe, expect, it } from 'vitest'
import { FILTERED_PERSON_UPDATE_PROPERTIES } from '../../../../src/projectors/identity/property-updates.ts'
import { Runner } from './helpers.ts'

/** A person `u1` created with these properties (and the first event's derived ones). */
async function personWith(properties: Record<string, unknown>) {
  const run = new Runner()
  await run.stamp('signed_up', 'u1', { $set: properties })
  const before = (await run.person('u1'))!
  return { run, before }
}

describe('updates PostHog filters', () => {
  it.each([...FILTERED_PERSON_UPDATE_PROPERTIES])(
    'a change of %s alone leaves the person as it was',
    async (key) => {
      const { run, before } = await personWith({ [key]: 'old', plan: 'free' })
      const result = await run.stamp('clicked', 'u1', { $set: { [key]: 'new', plan: 'free' } })
      expect(result.changes.persons).toEqual([])
      expect(await run.person('u1')).toEqual(before)
      // the event still shows its own value, as in PostHog
      expect(result.personProperties).toMatchObject({ [key]: 'new', plan: 'free' })
    },
  )

  it('a pageview of posthog-js moving to another page leaves the person as it was', async () => {
    const run = new Runner()
    const page = (path: string) => ({
      $current_url: `https://a.test${path}`,
      $pathname: path,
      $browser: 'Chrome',
      $screen_width: 1280,
    })
    await run.stamp('$pageview', 'u1', page('/'))
    const before = (await run.person('u1'))!
    expect(before.properties).toMatchObject({ $pathname: '/', $initial_pathname: '/' })
    const second = await run.stamp('$pageview', 'u1', page('/pricing'))
    expect(second.changes.persons).toEqual([])
    expect((await run.person('u1'))?.properties).toEqual(before.properties)
    expect(second.personProperties).toMatchObject({ $pathname: '/pricing', $initial_pathname: '/' })
  })

  it('keeps every change of the event when another key changes with them', async () => {
    const { run, before } = await personWith({ $current_url: 'https://a.test/', plan: 'free' })
    await run.stamp('clicked', 'u1', { $set: { $current_url: 'https://a.test/b', plan: 'pro' } })
    const after = (await run.person('u1'))!
    expect(after.version).toBe(before.version + 1)
    expect(after.properties).toMatchObject({ $current_url: 'https://a.test/b', plan: 'pro' })
  })

  it('counts a filtered key the person lacks, given by $set, and every GeoIP field but the few it lists', async () => {
    const { run, before } = await personWith({ $browser: 'Chrome' })
    await run.stamp('clicked', 'u1', { $set: { $browser_version: 120 } })
    expect((await run.person('u1'))?.properties.$browser_version).toBe(120)

    // $geoip_country_name and $geoip_city_name are not in the list: they make an update
    const geo = await personWith({ $geoip_country_name: 'Canada', $geoip_latitude: 43.6 })
    await geo.run.stamp('clicked', 'u1', { $set: { $geoip_latitude: 37.7 } })
    expect((await geo.run.person('u1'))?.properties.$geoip_latitude).toBe(43.6)
    await geo.run.stamp('clicked', 'u1', {
      $set: { $geoip_country_name: 'United States', $geoip_latitude: 37.7 },
    })
    expect((await geo.run.person('u1'))?.properties).toMatchObject({
      $geoip_country_name: 'United States',
      $geoip_latitude: 37.7,
    })
    // nor are the country code and the continent
    const code = await personWith({ $geoip_country_code: 'CA', $geoip_continent_code: 'NA' })
    await code.run.stamp('clicked', 'u1', { $set: { $geoip_country_code: 'US' } })
    await code.run.stamp('clicked', 'u1', { $set: { $geoip_continent_code: 'EU' } })
    expect((await code.run.person('u1'))?.properties).toMatchObject({
      $geoip_country_code: 'US',
      $geoip_continent_code: 'EU',
    })
    expect(before.version).toBe(0)
  })

  it('does not count a filtered key given by $set_once alone, and counts any other', async () => {
    const { run, before } = await personWith({ plan: 'free' })
    await run.stamp('clicked', 'u1', { $set_once: { $os: 'Linux' } })
    expect(await run.person('u1')).toEqual(before)
    await run.stamp('clicked', 'u1', { $set_once: { $os: 'Linux', first_plan: 'free' } })
    expect((await run.person('u1'))?.properties).toMatchObject({ $os: 'Linux', first_plan: 'free' })
  })

  it('counts an $unset of a key the person has', async () => {
    const { run } = await personWith({ $current_url: 'https://a.test/', plan: 'free' })
    await run.stamp('clicked', 'u1', { $set: { $current_url: 'https://a.test/b' }, $unset: ['plan'] })
    const after = (await run.person('u1'))!
    expect(after.properties).not.toHaveProperty('plan')
    expect(after.properties.$current_url).toBe('https://a.test/b')
  })

  it.each(['$identify', '$set', '$create_alias', '$merge_dangerously'])(
    'applies every change of a %s event, filtered keys too',
    async (event) => {
      const { run, before } = await personWith({ $current_url: 'https://a.test/' })
      await run.stamp(event, 'u1', { $set: { $current_url: 'https://a.test/b' } })
      const after = (await run.person('u1'))!
      expect(after.version).toBe(before.version + 1)
      expect(after.properties.$current_url).toBe('https://a.test/b')
    },
  )

  it.each(['$exception', '$$heatmap'])(
    'never updates a person from a %s event, but creates one',
    async (event) => {
      const { run, before } = await personWith({ plan: 'free' })
      const result = await run.stamp(event, 'u1', { $set: { plan: 'pro' }, $unset: ['plan'] })
      expect(result.changes.persons).toEqual([])
      expect(await run.person('u1')).toEqual(before)

      await run.stamp(event, 'u2', { $set: { plan: 'pro' } })
      expect((await run.person('u2'))?.properties.plan).toBe('pro')
    },
  )
})

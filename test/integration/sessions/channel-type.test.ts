// PostHog's channel types on the real server, with the cases of PostHog's
// posthog/hogql/database/schema/test/test_channel_type.py and their expected answers: the persons'
// $virt_initial_channel_type and $virt_initial_referring_domain_type (from $initial_* properties),
// and the sessions' $channel_type (from the first event's utm_*, click ids and $referring_domain),
// which must agree for the same visit.
import { describe, expect, it } from 'vitest'
import { clickhouse, uniqueTeamId } from '../../harness/index.ts'
import { insertPersons } from '../hogql/fixtures.ts'
import { hogql, insertSessionEvents } from './helpers.ts'

const ch = clickhouse()
const PERSON = '00000000-0000-4000-8000-00000000c001'

async function personField(field: string, properties: Record<string, unknown>): Promise<unknown> {
  const team = uniqueTeamId()
  await insertPersons(ch, [{ team, id: PERSON, createdAt: '2024-01-01 00:00:00', properties, version: 1 }])
  const rows = await hogql(ch, team, `select ${field} as channel_type from persons`)
  expect(rows).toHaveLength(1)
  return rows[0]![0]
}

async function sessionChannelType(properties: Record<string, unknown>): Promise<unknown> {
  const team = uniqueTeamId()
  await insertSessionEvents(ch, team, [{ event: '$pageview', session: 's1', properties }])
  const rows = await hogql(
    ch,
    team,
    `select events.session.$channel_type as channel_type, events.session.$entry_utm_source,
      events.session.$entry_utm_medium, events.session.$entry_utm_campaign, events.session.$entry_referring_domain
    from events where distinct_id = 'd1'`,
  )
  expect(rows).toHaveLength(1)
  return rows[0]![0]
}

describe("PostHog's TestReferringDomainType", () => {
  it.each([
    ['$direct', '$direct'],
    ['www.google.co.uk', 'Search'],
    ['yahoo.co.jp', 'Search'],
    ['m.alibaba.com', 'Shopping'],
    ['stripe.com', 'Shopping'],
    ['shopping.yahoo.co.jp', 'Shopping'],
    ['lnkd.in', 'Social'],
    ['old.reddit.com', 'Social'],
    ['plus.google.com', 'Social'],
    ['news.ycombinator.com', 'Social'],
  ])('%s is %s', async (domain, want) => {
    expect(
      await personField('$virt_initial_referring_domain_type', { $initial_referring_domain: domain }),
    ).toBe(want)
  })
})

describe("PostHog's TestChannelType, persons' $virt_initial_channel_type", () => {
  it.each([
    ['test_direct', { $initial_referring_domain: '$direct' }, 'Direct'],
    [
      'test_direct_empty_string',
      {
        $initial_referring_domain: '$direct',
        $initial_utm_source: '',
        $initial_utm_medium: '',
        $initial_utm_campaign: '',
        $initial_gclid: '',
        $initial_gad_source: '',
      },
      'Direct',
    ],
    [
      'test_direct_null_string',
      {
        $initial_referring_domain: '$direct',
        $initial_utm_source: 'null',
        $initial_utm_medium: 'null',
        $initial_utm_campaign: 'null',
        $initial_gclid: 'null',
        $initial_gad_source: 'null',
      },
      'Direct',
    ],
    [
      'test_cross_network',
      { $initial_referring_domain: '$direct', $initial_utm_campaign: 'cross-network' },
      'Cross Network',
    ],
    [
      'test_paid_shopping_domain',
      { $initial_referring_domain: 'www.ebay.co.uk', $initial_utm_medium: 'ppc' },
      'Paid Shopping',
    ],
    [
      'test_paid_shopping_source',
      { $initial_utm_source: 'ebay', $initial_utm_medium: 'ppc' },
      'Paid Shopping',
    ],
    [
      'test_paid_shopping_campaign',
      { $initial_utm_campaign: 'shopping', $initial_utm_medium: 'ppc' },
      'Paid Shopping',
    ],
    [
      'test_paid_search',
      { $initial_referring_domain: 'www.google.co.uk', $initial_gclid: 'some-gclid' },
      'Paid Search',
    ],
    ['test_paid_search_source', { $initial_utm_source: 'yahoo', $initial_utm_medium: 'ppc' }, 'Paid Search'],
    [
      'test_paid_video',
      { $initial_referring_domain: 'youtube.com', $initial_utm_medium: 'cpc' },
      'Paid Video',
    ],
    [
      'test_paid_video_source',
      { $initial_utm_source: 'youtube.com', $initial_utm_medium: 'cpc' },
      'Paid Video',
    ],
    ['test_organic_video', { $initial_referring_domain: 'youtube.com' }, 'Organic Video'],
    [
      'test_direct_with_red_herring_utm_tags_is_direct',
      {
        $initial_referring_domain: '$direct',
        $initial_utm_source: 'what',
        $initial_utm_medium: 'who',
        $initial_utm_campaign: 'slim shady',
      },
      'Direct',
    ],
    ['test_no_info_is_unknown', {}, 'Unknown'],
    [
      'test_unknown_domain_is_referral',
      { $initial_referring_domain: 'some-unknown-domain.example.com' },
      'Referral',
    ],
    [
      'test_doesnt_fail_on_numbers',
      {
        $initial_referring_domain: 'example.com',
        $initial_utm_source: 123,
        $initial_utm_medium: 123,
        $initial_utm_campaign: 123,
      },
      'Referral',
    ],
  ])('%s', async (_name, properties, want) => {
    expect(await personField('$virt_initial_channel_type', properties)).toBe(want)
  })

  it('reaches events through person', async () => {
    const team = uniqueTeamId()
    await insertPersons(ch, [
      {
        team,
        id: '00000000-0000-4000-8000-000000000000',
        createdAt: '2024-01-01 00:00:00',
        properties: { $initial_referring_domain: 'l.facebook.com' },
        version: 1,
      },
    ])
    await insertSessionEvents(ch, team, [{ event: '$pageview', session: 's1' }])
    expect(await hogql(ch, team, 'select event, person.$virt_initial_channel_type from events')).toEqual([
      ['$pageview', 'Organic Social'],
    ])
  })
})

describe("PostHog's TestChannelType, sessions' $channel_type", () => {
  it('test_empty_session', async () => {
    expect(await sessionChannelType({})).toBe('Unknown')
  })

  it('test_empty_string_session', async () => {
    expect(
      await sessionChannelType({
        utm_source: '',
        utm_medium: '',
        utm_campaign: '',
        gclid: '',
        gad_source: '',
      }),
    ).toBe('Unknown')
  })

  it('test_zendesk_ticket_14945: a paid medium in any case', async () => {
    expect(
      await sessionChannelType({
        utm_source: 'Facebook',
        utm_medium: 'Paid',
        utm_campaign: 'Foo',
        $referring_domain: 'l.facebook.com',
        gclid: '',
        gad_source: '',
      }),
    ).toBe('Paid Social')
  })
})

// PostHog's _get_initial_channel_type_from_wild_clicks: the same visit as a person's $initial_*
// properties and as a session's first event; both must give the expected channel.
async function wildClick(url: string, referrer: string): Promise<unknown> {
  const query = new URL(url).searchParams
  const person: Record<string, unknown> = {}
  const event: Record<string, unknown> = {}
  for (const key of [
    'utm_source',
    'utm_medium',
    'utm_campaign',
    'gclid',
    'gad_source',
    'msclkid',
    'fbclid',
  ]) {
    const v = query.get(key)
    if (v) {
      person[`$initial_${key}`] = v
      event[key] = v
    }
  }
  const domain = referrer ? new URL(referrer).host : '$direct'
  person.$initial_referring_domain = domain
  event.$referring_domain = domain
  const session = await sessionChannelType(event)
  const initial = await personField('$virt_initial_channel_type', person)
  expect(session).toBe(initial)
  return initial
}

describe("PostHog's TestChannelType wild clicks (persons and sessions agree)", () => {
  it.each([
    [
      'test_yahoo_search_for_shoes',
      'https://www.temu.com/subject/n9/x.html?_x_ads_channel=bing&msclkid=98833ce81fa416f104e8599a17a48b7d&utm_source=bing&utm_medium=cpc&utm_campaign=Bing%E8%B4%AD%E7%89%A9_GB&utm_term=4585925565374752',
      'https://uk.search.yahoo.com/',
      'Paid Search',
    ],
    [
      'test_chrome_google_search_for_shoes',
      'https://www.vivaia.com/item/square-toe-v-cut-flats-p_10003645.html?gid=10011676&currency=GBP&shipping_country_code=GB&gad_source=1&gclid=CjwKCAiA98WrBhAYEiwA2WvhOuiyZpOvzXUVBP0KNplo9EFUSYmm4',
      '',
      'Paid Search',
    ],
    [
      'test_firefox_google_search_for_shoes',
      'https://www.allbirds.co.uk/products/mens-wool-runner?gad_source=1&size=uk-7&utm_campaign=PMax%20%2F%2F%20UK&utm_content=&utm_medium=pmax&utm_source=google&utm_term=',
      '',
      'Paid Search',
    ],
    [
      'test_daily_mail_ad_click',
      'https://www.vivaia.com/item/x.html?gid=10011676&currency=GBP&shipping_country_code=GB&gclid=EAIaIQobChMIxvGy5rr_ggMVYi0GAB0KSAumEAEYASABEgLZ2PD_BwE',
      'https://2bb5cd7f10ba63d8b55ecfac1a3948db.safeframe.googlesyndication.com/',
      'Paid Unknown',
    ],
    ['test_google_organic', 'https://www.office.co.uk/', 'https://www.google.com/', 'Organic Search'],
    ['test_youtube_organic', 'https://twitter.com/hbomberguy', 'https://www.youtube.com/', 'Organic Video'],
    [
      'test_youtube_sidebar_ad',
      'https://www.quooker.co.uk/?gclid=CjwKCAiAmsurBhBvEiwA6e-WPNVcMzaGnrW8G2Wd4Ye',
      'https://www.youtube.com/',
      'Paid Video',
    ],
    [
      'test_facebook_sidebar_ad',
      'https://www.tothefairest.com/shop/?utm_source=facebook&utm_medium=cpc&utm_campaign=120201466136570051&fbclid=IwAR30EpkagUJ3vLo7',
      'https://l.facebook.com/',
      'Paid Social',
    ],
    [
      'test_facebook_feed_ad',
      'https://www.loopearplugs.com/products/switch?utm_source=facebook&utm_medium=paid&utm_campaign=UK_EN_TOF_Purchase&utm_term=120201603163080541&fbclid=IwAR3KhttbYqH0GWskV5',
      'https://l.facebook.com/',
      'Paid Social',
    ],
    [
      'test_facebook_feed_organic_link',
      'https://lifehacker.com/get-two-of-obsidian-1845845998?fbclid=IwAR1ZEOUVr76FRjZWnIio',
      'https://l.facebook.com/',
      'Organic Social',
    ],
    [
      'test_bing_ad_click',
      'https://www.mrporter.com/en-gb/mens/product/x?cm_mmc=sea&msclkid=f72b49e2bf2719cb4ee22c91ac4963a7&utm_source=bing&utm_medium=cpc&utm_campaign=BNG%3AMRP&utm_term=4581046492826348',
      'https://www.bing.com/',
      'Paid Search',
    ],
    [
      'test_bing_ad_click (firefox)',
      'https://www.nisbets.co.uk/x?vatToggle=incvat&plaid=1&utm_source=bing&utm_medium=cpc&utm_campaign=8+-+Shopping+-+Clothing&utm_term=4581527532440033&utm_content=Clothing',
      '',
      'Paid Search',
    ],
    ['test_bing_organic_click', 'https://www.schuh.co.uk/', 'https://www.bing.com/', 'Organic Search'],
    [
      'test_duckduckgo_organic_click',
      'https://www.asos.com/women/shoes/cat/?cid=4172',
      'https://duckduckgo.com/',
      'Organic Search',
    ],
    [
      'test_duckduckgo_paid_click',
      'https://www.temu.com/uk/kuiper/un2.html?_x_ads_channel=bing&msclkid=0c97748ea8581c0fa51611f9afccba18&utm_source=bing&utm_medium=cpc&utm_campaign=0725_WJJ_UK_KW&utm_term=.%20shoes',
      'https://duckduckgo.com/',
      'Paid Search',
    ],
    ['test_fbclid_only', 'https://xyz.com/?fbclid=ABC', '', 'Organic Social'],
  ])('%s', async (_name, url, referrer, want) => {
    expect(await wildClick(url, referrer)).toBe(want)
  })
})

// PostHog's lookup functions called directly (test_printer.py prints them; the values are the
// channel table's rows, worked out by hand from channel-definitions.ts)
describe('hogql_lookup* functions', () => {
  it.each([
    ["hogql_lookupDomainType('www.google.co.uk')", 'Search'],
    ["hogql_lookupDomainType('some-unknown-domain.example.com')", null],
    ["hogql_lookupPaidSourceType('google')", 'Paid Search'],
    ["hogql_lookupOrganicSourceType('google')", 'Organic Search'],
    ["hogql_lookupPaidMediumType('social')", 'Paid Social'],
    ["hogql_lookupOrganicMediumType('social')", 'Organic Social'],
    ["hogql_lookupPaidMediumType('email')", null],
    ["hogql_lookupOrganicMediumType('email')", 'Email'],
    // Email has no paid type: the paid lookup falls through to the first significant subdomain
    ["hogql_lookupPaidSourceType('mail.google.com')", 'Paid Search'],
    ["hogql_lookupOrganicSourceType('mail.google.com')", 'Email'],
    ['hogql_lookupPaidSourceType(NULL)', null],
  ])('%s is %s', async (call, want) => {
    expect(await hogql(ch, uniqueTeamId(), `select ${call}`)).toEqual([[want]])
  })
})

import { PostHog } from 'posthog-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { untilProjected } from './helpers.ts'
import { type Isolated, isolatedBurrow } from './isolated.ts'

// The contract with posthog-node at its defaults (plus the personal key getRemoteConfigPayload
// needs): every request it makes to Burrow is recorded and none may fail.

let env: Isolated
const seen: { method: string; path: string; status: number }[] = []

beforeAll(async () => {
  env = await isolatedBurrow('posthog-node contract')
  const flag = await env.call('POST', `/api/projects/${env.project.id}/feature_flags/`, {
    key: 'checkout-config',
    filters: {
      groups: [{ properties: [], rollout_percentage: 100 }],
      payloads: { true: JSON.stringify({ color: 'blue', steps: 3 }) },
    },
  })
  expect(flag.status).toBe(201)
})

// every request of the SDK, for the test log
afterAll(() => console.log(seen.map((s) => `${s.method} ${s.path} ${s.status}`).join('\n')))

function client(): PostHog {
  return new PostHog(env.project.api_token, {
    host: env.burrow.url,
    personalApiKey: env.key,
    fetch: async (url, options) => {
      const res = await fetch(url, options as RequestInit)
      seen.push({ method: options.method ?? 'GET', path: new URL(url).pathname, status: res.status })
      return res
    },
  })
}

describe('posthog-node', () => {
  it('gets a flag’s remote config payload, decoded', async () => {
    const ph = client()
    try {
      expect(await ph.getRemoteConfigPayload('checkout-config')).toEqual({ color: 'blue', steps: 3 })
    } finally {
      await ph.shutdown()
    }
    expect(seen.filter((s) => s.path.endsWith('/remote_config'))).toEqual([
      {
        method: 'GET',
        path: '/api/projects/@current/feature_flags/checkout-config/remote_config',
        status: 200,
      },
    ])
  })

  it('puts identify’s properties on the person', async () => {
    const ph = client()
    ph.identify({ distinctId: 'node-user-7', properties: { email: 'grace@example.com', plan: 'pro' } })
    ph.capture({ distinctId: 'node-user-7', event: 'order placed', properties: { amount: 42 } })
    await ph.shutdown()
    const person = await untilProjected(
      () => env.personOf('node-user-7'),
      (p) => p.email === 'grace@example.com',
    )
    expect(person).toMatchObject({ email: 'grace@example.com', plan: 'pro' })
  })

  it('got no 4xx or 5xx for any request', () => {
    expect(seen.length).toBeGreaterThan(1)
    expect(seen.filter((s) => s.status >= 400)).toEqual([])
  })
})

import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import {
  clientConfig,
  configJs,
  decideConfigFields,
  onPermittedDomain,
} from '../../../src/remote-config/serve.ts'

// Domain cases from PostHog's rust/common/replay-domains tests; sanitizing from hypercache-server.

describe('onPermittedDomain', () => {
  it('matches the Origin host, with or without a trailing slash', () => {
    const d = ['https://app.example.com']
    expect(onPermittedDomain(d, { origin: 'https://app.example.com' })).toBe(true)
    expect(onPermittedDomain(d, { origin: 'https://app.example.com/' })).toBe(true)
    expect(onPermittedDomain(d, { origin: 'https://wrong.example.com' })).toBe(false)
  })

  it('matches the Referer host', () => {
    const d = ['https://app.example.com']
    expect(onPermittedDomain(d, { referer: 'https://app.example.com/some/path' })).toBe(true)
    expect(onPermittedDomain(d, { referer: 'https://wrong.example.com/path' })).toBe(false)
  })

  it('ignores a www. prefix', () => {
    expect(onPermittedDomain(['https://example.com'], { origin: 'https://www.example.com' })).toBe(true)
  })

  it('matches subdomains for *. but never the bare domain or a lookalike', () => {
    const d = ['https://*.example.com']
    for (const o of [
      'https://app.example.com',
      'https://test.example.com',
      'https://deep.nested.example.com',
      'https://www.example.com',
    ]) {
      expect(onPermittedDomain(d, { origin: o }), o).toBe(true)
    }
    for (const o of ['https://example.com', 'https://app.evil.com', 'https://notexample.com']) {
      expect(onPermittedDomain(d, { origin: o }), o).toBe(false)
    }
  })

  it('matches a wildcard inside a label', () => {
    const d = ['https://app-*.example.com']
    expect(onPermittedDomain(d, { origin: 'https://app-staging.example.com' })).toBe(true)
    expect(onPermittedDomain(d, { origin: 'https://other.example.com' })).toBe(false)
  })

  it('lets native SDKs record and refuses requests without headers', () => {
    const d = ['https://web-only.com']
    for (const ua of [
      'posthog-android/3.0.0',
      'posthog-ios/2.0.0',
      'posthog-react-native/1.0.0',
      'posthog-flutter/1.0.0',
      'posthog-unity/1.0.0',
    ]) {
      expect(onPermittedDomain(d, { 'user-agent': ua }), ua).toBe(true)
    }
    expect(onPermittedDomain(d, { 'user-agent': 'Mozilla/5.0' })).toBe(false)
    expect(onPermittedDomain(d, {})).toBe(false)
    // bare domains carry no scheme and never match
    expect(onPermittedDomain(['app.example.com'], { origin: 'https://app.example.com' })).toBe(false)
  })
})

describe('clientConfig', () => {
  const doc = {
    token: 'phc_1',
    survey_config: { a: 1 },
    surveys: [{ id: 's', base_language: 'en', questions: [{ id: 'q', isNpsQuestion: true, question: 'x' }] }],
    sessionRecording: { endpoint: '/s/', domains: ['https://a.io'] },
  }

  it('drops the token, survey_config, domains and internal survey fields', () => {
    expect(clientConfig(doc, true)).toEqual({
      surveys: [{ id: 's', questions: [{ id: 'q', question: 'x' }] }],
      sessionRecording: { endpoint: '/s/' },
    })
  })

  it('turns recording off with a reason for an origin off the list, or when it is off', () => {
    expect(clientConfig(doc, false)).toMatchObject({
      sessionRecording: false,
      sessionRecordingDisabledReason: 'domain_not_allowed',
    })
    expect(clientConfig({ sessionRecording: false }, true)).toEqual({
      sessionRecording: false,
      sessionRecordingDisabledReason: 'not_enabled',
      surveys: false,
    })
    // an empty list allows every origin
    expect(
      clientConfig({ sessionRecording: { endpoint: '/s/', domains: [] } }, false).sessionRecording,
    ).toEqual({ endpoint: '/s/' })
  })

  it('gives /decide surveys as a boolean and no hasFeatureFlags', () => {
    expect(decideConfigFields({ hasFeatureFlags: true, surveys: [{ id: 's' }] })).toEqual({
      surveys: true,
      isAuthenticated: false,
      toolbarParams: {},
      config: { enable_collect_everything: true },
    })
  })
})

describe('configJs', () => {
  it('registers the config without touching other tokens, and cannot be broken out of by text', () => {
    const config = { note: '</script><script>alert(1)</script>', sep: 'a\u2028b' }
    const js = configJs('phc_x', config)
    expect(js).not.toContain('</script>')
    const window: Record<string, Record<string, unknown>> = { _POSTHOG_REMOTE_CONFIG: { other: 1 } }
    runInNewContext(js, { window })
    expect(window._POSTHOG_REMOTE_CONFIG).toEqual({ other: 1, phc_x: { config, siteApps: [] } })
  })
})

import { wildcardMatches } from '../patterns/wildcard.ts'
import type { Json, RemoteConfig } from './build.ts'

// What each caller of the remote config receives: the cached document made safe for clients
// (PostHog's hypercache-server sanitize.rs), the session recording domain check against the
// request's Origin/Referer (rust/common/replay-domains), and the config.js wrapper.

/** The request headers the domain check reads. */
export interface ClientHeaders {
  origin?: string | string[]
  referer?: string | string[]
  'user-agent'?: string | string[]
}

// SDKs that run outside a browser send no Origin; they are always allowed to record.
const NATIVE_CLIENTS = [
  'posthog-android',
  'posthog-ios',
  'posthog-react-native',
  'posthog-flutter',
  'posthog-unity',
]

const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v)

// The host of a URL; a bare domain (no scheme) has none, as in PostHog. `*` survives parsing.
function hostOf(url: string | undefined): string | null {
  if (!url) return null
  try {
    const host = new URL(url.replaceAll('*', '-wildcard-')).hostname
    return host ? host.replaceAll('-wildcard-', '*') : null
  } catch {
    return null
  }
}

const stripWww = (h: string) => (h.startsWith('www.') ? h.slice(4) : h)

function hostMatches(permitted: string[], host: string | null): boolean {
  if (!host) return false
  const bare = stripWww(host)
  for (const domain of permitted) {
    if (domain.startsWith('*.')) {
      // `*.example.com` covers subdomains only, never example.com itself
      if (host.endsWith(domain.slice(1))) return true
    } else if (domain.includes('*')) {
      // split and compare (src/patterns/wildcard.ts): a RegExp built from it backtracks
      if (wildcardMatches(domain, host) || wildcardMatches(domain, bare)) return true
    } else if (stripWww(domain) === bare) {
      return true
    }
  }
  return false
}

/** PostHog's on_permitted_domain: Origin or Referer host on the list, or a native SDK. */
export function onPermittedDomain(domains: string[], headers: ClientHeaders): boolean {
  const permitted = domains.map(hostOf).filter((h): h is string => h !== null)
  const ua = first(headers['user-agent'])
  return (
    hostMatches(permitted, hostOf(first(headers.origin))) ||
    hostMatches(permitted, hostOf(first(headers.referer))) ||
    (ua !== undefined && NATIVE_CLIENTS.some((c) => ua.includes(c)))
  )
}

/** The recording domains of a cached document; empty when recording is off or unrestricted. */
export function recordingDomains(config: RemoteConfig): string[] {
  const rec = config.sessionRecording
  if (!rec || typeof rec !== 'object' || Array.isArray(rec)) return []
  const domains = rec.domains
  return Array.isArray(domains) ? domains.filter((d): d is string => typeof d === 'string') : []
}

function sanitizeSurveys(surveys: Json): Json {
  if (!Array.isArray(surveys)) return surveys
  return surveys.map((s) => {
    if (!s || typeof s !== 'object' || Array.isArray(s)) return s
    const { base_language: _b, ...rest } = s
    if (Array.isArray(rest.questions)) {
      rest.questions = rest.questions.map((q) => {
        if (!q || typeof q !== 'object' || Array.isArray(q)) return q
        const { isNpsQuestion: _n, ...kept } = q
        return kept
      })
    }
    return rest
  })
}

/**
 * The document as clients get it: no token, no survey_config, no recording domain list, and
 * `sessionRecording: false` with a reason when recording is off or this origin is not allowed.
 */
export function clientConfig(config: RemoteConfig, permitted: boolean): RemoteConfig {
  const { token: _t, survey_config: _s, siteAppsJS: _j, ...out } = config
  out.surveys = sanitizeSurveys(out.surveys ?? false)
  const rec = out.sessionRecording
  if (rec && typeof rec === 'object' && !Array.isArray(rec)) {
    const { domains, ...kept } = rec
    const restricted = Array.isArray(domains) && domains.length > 0
    if (restricted && !permitted) {
      out.sessionRecording = false
      out.sessionRecordingDisabledReason = 'domain_not_allowed'
    } else {
      out.sessionRecording = kept
    }
  } else if (rec === false) {
    out.sessionRecordingDisabledReason = 'not_enabled'
  }
  return out
}

// JSON inside a script: `<` escaped so no text can close a script element, and the two line
// separators JavaScript once refused inside strings.
const scriptJson = (v: unknown) =>
  JSON.stringify(v)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029')

/** config.js: registers the config under the token where posthog-js looks for it. */
export function configJs(token: string, config: RemoteConfig): string {
  const key = scriptJson(token)
  return [
    '(function() {',
    '  window._POSTHOG_REMOTE_CONFIG = window._POSTHOG_REMOTE_CONFIG || {};',
    `  window._POSTHOG_REMOTE_CONFIG[${key}] = {`,
    `    config: ${scriptJson(config)},`,
    '    siteApps: []',
    '  }',
    '})();',
    '',
  ].join('\n')
}

/**
 * The fields /decide adds next to the flags (PostHog's legacy decide with remote config): the
 * client document with `surveys` as a boolean, without `hasFeatureFlags`, plus the fixed
 * toolbar/autocapture fields old SDKs read.
 */
export function decideConfigFields(client: RemoteConfig): RemoteConfig {
  const { hasFeatureFlags: _h, ...rest } = client
  return {
    ...rest,
    surveys: Array.isArray(rest.surveys) ? rest.surveys.length > 0 : rest.surveys === true,
    isAuthenticated: false,
    toolbarParams: {},
    config: { enable_collect_everything: true },
  }
}

import type { Project, ProjectSettings } from '../accounts/documents.ts'

// The remote config document posthog-js loads at start (/array/<token>/config and config.js), built
// from the project's settings the way PostHog's RemoteConfig.build_config does
// (posthog/models/remote_config.py). Keys, order and defaults are PostHog's; what Burrow does not
// have (site apps, conversations, product tours, billing quotas) is reported as off.

/** PostHog's capture path for SDKs that follow `analytics.endpoint`; Burrow serves it too. */
export const ANALYTICS_ENDPOINT = '/i/v0/e/'
/** Where posthog-js posts recordings. */
export const RECORDINGS_ENDPOINT = '/s/'

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
export type RemoteConfig = Record<string, Json>

/** What the document needs besides the project's own settings. */
export interface RemoteConfigInputs {
  /** any active, non-deleted feature flag in the project */
  hasFeatureFlags: boolean
  /** the project's non-archived surveys as /api/surveys/ lists them */
  surveys: Json[]
}

// Decimal("0.50").normalize() in PostHog: trailing zeros go, and a full sample is no sampling.
function sampleRate(stored: string | null): string | null {
  if (stored === null) return null
  const n = Number(stored)
  if (!Number.isFinite(n) || n === 1) return null
  return String(n)
}

function linkedFlag(flag: ProjectSettings['session_recording_linked_flag']): Json {
  if (!flag) return null
  return flag.variant != null ? { flag: flag.key, variant: flag.variant } : flag.key
}

/** The `sessionRecording` object, or false when recording is off (_build_session_recording_config). */
export function sessionRecordingConfig(s: ProjectSettings): Json {
  if (!s.session_recording_opt_in) return false
  const recorder = s.extra_settings?.recorder_script
  const recordCanvas = s.session_replay_config?.record_canvas === true
  return {
    endpoint: RECORDINGS_ENDPOINT,
    consoleLogRecordingEnabled: !!s.capture_console_log_opt_in,
    recorderVersion: 'v2',
    minimumDurationMilliseconds: s.session_recording_minimum_duration_milliseconds || null,
    networkPayloadCapture: (s.session_recording_network_payload_capture_config as Json) || null,
    masking: (s.session_recording_masking_config as Json) || null,
    urlBlocklist: s.session_recording_url_blocklist_config as Json,
    scriptConfig: typeof recorder === 'string' && recorder ? { script: recorder } : null,
    // Removed per request once the Origin/Referer has been checked against it (serve.ts).
    domains: s.recording_domains ?? [],
    recordCanvas,
    canvasFps: recordCanvas ? 3 : null,
    canvasQuality: recordCanvas ? '0.4' : null,
    version: 1,
    sampleRate: sampleRate(s.session_recording_sample_rate),
    linkedFlag: linkedFlag(s.session_recording_linked_flag),
    urlTriggers: s.session_recording_url_trigger_config as Json,
    eventTriggers: s.session_recording_event_trigger_config,
    triggerMatchType: s.session_recording_trigger_match_type_config,
  }
}

/** The cached document of a project, before the per-request sanitizing of serve.ts. */
export function buildRemoteConfig(project: Project, inputs: RemoteConfigInputs): RemoteConfig {
  const s = project.settings
  const surveysOn = s.surveys_opt_in === true && inputs.surveys.length > 0
  const config: RemoteConfig = {
    token: project.api_token,
    supportedCompression: ['gzip', 'gzip-js'],
    hasFeatureFlags: inputs.hasFeatureFlags,
    captureDeadClicks: !!s.capture_dead_clicks,
    capturePerformance:
      s.capture_performance_opt_in || s.autocapture_web_vitals_opt_in
        ? {
            network_timing: !!s.capture_performance_opt_in,
            web_vitals: !!s.autocapture_web_vitals_opt_in,
            web_vitals_allowed_metrics: s.autocapture_web_vitals_allowed_metrics,
          }
        : false,
    autocapture_opt_out: !!s.autocapture_opt_out,
    autocaptureExceptions: !!s.autocapture_exceptions_opt_in,
    analytics: { endpoint: ANALYTICS_ENDPOINT },
    elementsChainAsString: true,
    errorTracking: { autocaptureExceptions: !!s.autocapture_exceptions_opt_in, suppressionRules: [] },
    // Burrow has no logs intake (/i/v1/logs) yet: the SDK is not asked to send console logs there,
    // whatever logs_settings says (docs/sdk-compatibility.md).
    logs: { captureConsoleLogs: false },
    sessionRecording: sessionRecordingConfig(s),
    heatmaps: !!s.heatmaps_opt_in,
    conversations: false,
    surveys: surveysOn ? inputs.surveys : false,
  }
  if (surveysOn && s.survey_config) config.survey_config = s.survey_config as Json
  config.productTours = false
  config.defaultIdentifiedOnly = true
  config.siteApps = []
  return config
}

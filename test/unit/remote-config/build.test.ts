import { describe, expect, it } from 'vitest'
import { type Project, ProjectDoc } from '../../../src/accounts/documents.ts'
import { buildRemoteConfig, sessionRecordingConfig } from '../../../src/remote-config/build.ts'

// Expected values from PostHog's posthog/models/test/test_remote_config.py and its snapshot.

const project = (settings: Record<string, unknown> = {}): Project =>
  ProjectDoc.parse({
    id: 1,
    uuid: '00000000-0000-4000-8000-000000000001',
    organization_id: '00000000-0000-4000-8000-000000000002',
    name: 'p',
    api_token: 'phc_12345',
    created_at: '2026-01-01T00:00:00Z',
    settings,
  })

const none = { hasFeatureFlags: false, surveys: [] }

describe('buildRemoteConfig', () => {
  it("builds PostHog's document for a new team (snapshot test_creates_remote_config_immediately)", () => {
    expect(
      buildRemoteConfig(
        project({ session_recording_opt_in: true, recording_domains: ['https://*.example.com'] }),
        none,
      ),
    ).toEqual({
      token: 'phc_12345',
      supportedCompression: ['gzip', 'gzip-js'],
      hasFeatureFlags: false,
      captureDeadClicks: false,
      capturePerformance: { network_timing: true, web_vitals: false, web_vitals_allowed_metrics: null },
      autocapture_opt_out: false,
      autocaptureExceptions: false,
      analytics: { endpoint: '/i/v0/e/' },
      elementsChainAsString: true,
      errorTracking: { autocaptureExceptions: false, suppressionRules: [] },
      logs: { captureConsoleLogs: false },
      sessionRecording: {
        canvasFps: null,
        canvasQuality: null,
        consoleLogRecordingEnabled: true,
        domains: ['https://*.example.com'],
        endpoint: '/s/',
        eventTriggers: [],
        linkedFlag: null,
        masking: null,
        minimumDurationMilliseconds: null,
        networkPayloadCapture: null,
        recordCanvas: false,
        recorderVersion: 'v2',
        sampleRate: null,
        scriptConfig: { script: 'posthog-recorder' },
        triggerMatchType: null,
        urlBlocklist: [],
        urlTriggers: [],
        version: 1,
      },
      heatmaps: false,
      conversations: false,
      surveys: false,
      productTours: false,
      defaultIdentifiedOnly: true,
      siteApps: [],
    })
  })

  it.each([
    ['1.00', null],
    ['0.95', '0.95'],
    ['0.50', '0.5'],
    ['0.00', '0'],
    [null, null],
  ])('normalises sample rate %s to %s (test_session_recording_sample_rate)', (stored, expected) => {
    const s = project({ session_recording_opt_in: true, session_recording_sample_rate: stored }).settings
    expect((sessionRecordingConfig(s) as { sampleRate: unknown }).sampleRate).toBe(expected)
  })

  it('sends the linked flag as its key, or as {flag, variant} when it has a variant', () => {
    const linked = (flag: unknown) =>
      (
        sessionRecordingConfig(
          project({ session_recording_opt_in: true, session_recording_linked_flag: flag }).settings,
        ) as {
          linkedFlag: unknown
        }
      ).linkedFlag
    expect(linked({ id: 105969, key: 'record_sessions', variant: null })).toBe('record_sessions')
    expect(linked({ id: 1, key: 'record_sessions' })).toBe('record_sessions')
    expect(linked({ id: 1, key: 'record_sessions', variant: 'test' })).toEqual({
      flag: 'record_sessions',
      variant: 'test',
    })
  })

  it('follows the toggles (capture_dead_clicks, autocapture, exceptions, heatmaps, performance off)', () => {
    const c = buildRemoteConfig(
      project({
        capture_dead_clicks: true,
        autocapture_opt_out: true,
        autocapture_exceptions_opt_in: true,
        heatmaps_opt_in: true,
        capture_performance_opt_in: false,
      }),
      { hasFeatureFlags: true, surveys: [] },
    )
    expect(c).toMatchObject({
      captureDeadClicks: true,
      autocapture_opt_out: true,
      autocaptureExceptions: true,
      errorTracking: { autocaptureExceptions: true },
      heatmaps: true,
      capturePerformance: false,
      hasFeatureFlags: true,
    })
    const vitals = buildRemoteConfig(
      project({ capture_performance_opt_in: false, autocapture_web_vitals_opt_in: true }),
      none,
    )
    expect(vitals.capturePerformance).toEqual({
      network_timing: false,
      web_vitals: true,
      web_vitals_allowed_metrics: null,
    })
  })

  it('uses a custom recorder script and canvas settings (test_extra_settings_recorder_script)', () => {
    const s = project({
      session_recording_opt_in: true,
      extra_settings: { recorder_script: 'custom-recorder' },
      session_replay_config: { record_canvas: true },
      capture_console_log_opt_in: false,
    }).settings
    expect(sessionRecordingConfig(s)).toMatchObject({
      scriptConfig: { script: 'custom-recorder' },
      recordCanvas: true,
      canvasFps: 3,
      canvasQuality: '0.4',
      consoleLogRecordingEnabled: false,
    })
    expect(
      sessionRecordingConfig(project({ session_recording_opt_in: true, extra_settings: null }).settings),
    ).toMatchObject({
      scriptConfig: null,
    })
  })

  it('lists surveys only when surveys are on and there is one, with survey_config', () => {
    const survey = { id: 's1', name: 'Basic survey', type: 'popover' }
    expect(buildRemoteConfig(project(), { hasFeatureFlags: false, surveys: [survey] }).surveys).toBe(false)
    expect(buildRemoteConfig(project({ surveys_opt_in: true }), none).surveys).toBe(false)
    const on = buildRemoteConfig(project({ surveys_opt_in: true, survey_config: { appearance: { a: 1 } } }), {
      hasFeatureFlags: false,
      surveys: [survey],
    })
    expect(on.surveys).toEqual([survey])
    expect(on.survey_config).toEqual({ appearance: { a: 1 } })
  })
})

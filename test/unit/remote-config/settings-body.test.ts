import { describe, expect, it } from 'vitest'
import { ProjectSettingsDoc } from '../../../src/accounts/documents.ts'
import { applySettingsPatch, SettingsPatch } from '../../../src/remote-config/settings-body.ts'

// PostHog's TeamSerializer rules (posthog/api/team.py) for the SDK settings.

const issue = (body: unknown) => {
  const r = SettingsPatch.safeParse(body)
  return r.success ? null : { path: r.error.issues[0]!.path.join('.'), message: r.error.issues[0]!.message }
}

describe('SettingsPatch', () => {
  it('keeps the sample rate as DRF decimal text with two places', () => {
    expect(SettingsPatch.parse({ session_recording_sample_rate: 0.5 }).session_recording_sample_rate).toBe(
      '0.50',
    )
    expect(SettingsPatch.parse({ session_recording_sample_rate: '1' }).session_recording_sample_rate).toBe(
      '1.00',
    )
    expect(
      SettingsPatch.parse({ session_recording_sample_rate: null }).session_recording_sample_rate,
    ).toBeNull()
    expect(issue({ session_recording_sample_rate: 0.125 })?.message).toBe(
      'Ensure that there are no more than 2 decimal places.',
    )
    expect(issue({ session_recording_sample_rate: -0.1 })?.message).toBe(
      'Ensure this value is greater than or equal to 0.',
    )
    expect(issue({ session_recording_sample_rate: 'half' })?.message).toBe('A valid number is required.')
  })

  it('accepts {id, key} or {id, key, variant} as the linked flag, normalising a numeric id', () => {
    expect(
      SettingsPatch.parse({ session_recording_linked_flag: { id: '12', key: 'k' } })
        .session_recording_linked_flag,
    ).toEqual({
      id: 12,
      key: 'k',
    })
    expect(issue({ session_recording_linked_flag: { id: true, key: 'k' } })?.message).toBe(
      "Must provide an integer 'id'.",
    )
    expect(issue({ session_recording_linked_flag: { id: 12.5, key: 'k' } })?.message).toBe(
      "Must provide an integer 'id'.",
    )
    expect(issue({ session_recording_linked_flag: [] })?.message).toBe('Must provide a dictionary or None.')
  })

  it('checks the masking, replay and duration settings', () => {
    expect(issue({ session_recording_masking_config: { maskTextSelector: 1 } })?.message).toBe(
      'maskTextSelector must be a string.',
    )
    expect(issue({ session_recording_masking_config: { other: 1 } })?.message).toContain(
      'Must provide a dictionary with only known keys',
    )
    expect(issue({ session_replay_config: { record_canvas: true, fps: 1 } })?.message).toBe(
      'Must provide a dictionary with only known keys. One or more of record_canvas, ai_config.',
    )
    expect(issue({ session_recording_minimum_duration_milliseconds: 30_001 })?.path).toBe(
      'session_recording_minimum_duration_milliseconds',
    )
  })

  it('drops empty recording domains', () => {
    expect(SettingsPatch.parse({ recording_domains: ['https://a.io', null, ''] }).recording_domains).toEqual([
      'https://a.io',
    ])
  })
})

describe('applySettingsPatch', () => {
  it('replaces given fields only, and null resets a list setting to none', () => {
    const current = ProjectSettingsDoc.parse({
      session_recording_event_trigger_config: ['signup'],
      heatmaps_opt_in: true,
    })
    const next = applySettingsPatch(
      current,
      SettingsPatch.parse({ session_recording_event_trigger_config: null, autocapture_opt_out: true }),
    )
    expect(next.session_recording_event_trigger_config).toEqual([])
    expect(next.autocapture_opt_out).toBe(true)
    expect(next.heatmaps_opt_in).toBe(true)
  })
})

import { describe, expect, it } from 'vitest'
import { selectTeam } from '../../../../src/projectors/steps/select-team.ts'

describe('selectTeam', () => {
  it('passes every team when the projector has no team list', () => {
    expect(selectTeam({ teamId: 3 }, undefined)).toEqual({ type: 'ok', value: { teamId: 3 } })
  })
  it('passes a listed team and drops the others as other_team', () => {
    const teams = new Set([3])
    expect(selectTeam({ teamId: 3 }, teams).type).toBe('ok')
    expect(selectTeam({ teamId: 4 }, teams)).toEqual({ type: 'drop', reason: 'other_team' })
  })
})

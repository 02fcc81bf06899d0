import { DROPS, drop, ok, type StepResult } from './results.ts'

/** Passes a chunk of a team this projector handles (`teams` undefined: every team); drops the others. */
export function selectTeam<T extends { teamId: number }>(
  chunk: T,
  teams: ReadonlySet<number> | undefined,
): StepResult<T> {
  return !teams || teams.has(chunk.teamId) ? ok(chunk) : drop(DROPS.otherTeam)
}

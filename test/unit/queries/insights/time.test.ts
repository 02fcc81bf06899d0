// Wall-clock readings (src/queries/insights/common/time.ts): the UTC shortcut and the remembered
// readings answer what the platform prints, across a DST change.
import { describe, expect, it } from 'vitest'
import { instantOf, wallOf } from '../../../../src/queries/insights/common/time.ts'

/** The reading as the Swedish locale prints it ('YYYY-MM-DD hh:mm:ss'), read here on its own. */
function printedWall(instant: number, tz: string): number {
  const text = new Date(instant).toLocaleString('sv-SE', { timeZone: tz })
  return Date.parse(`${text.replace(' ', 'T')}Z`) + (instant % 1000)
}

describe('wallOf', () => {
  // 2026-03-29 01:00 UTC: Paris goes from +01:00 to +02:00
  const around = Array.from({ length: 49 }, (_, i) => Date.UTC(2026, 2, 28, 12) + i * 1_800_000 + 123)

  it('reads UTC instants as themselves', () => {
    for (const t of around) expect(wallOf(t, 'UTC')).toBe(printedWall(t, 'UTC'))
  })

  it('answers the same reading the first time and when asked again', () => {
    for (let round = 0; round < 2; round++) {
      for (const t of around) expect(wallOf(t, 'Europe/Paris')).toBe(printedWall(t, 'Europe/Paris'))
    }
    expect(wallOf(Date.UTC(2026, 2, 29, 0, 30), 'Europe/Paris')).toBe(Date.UTC(2026, 2, 29, 1, 30))
    expect(wallOf(Date.UTC(2026, 2, 29, 1, 30), 'Europe/Paris')).toBe(Date.UTC(2026, 2, 29, 3, 30))
    expect(instantOf(Date.UTC(2026, 2, 29, 3, 30), 'Europe/Paris')).toBe(Date.UTC(2026, 2, 29, 1, 30))
  })
})

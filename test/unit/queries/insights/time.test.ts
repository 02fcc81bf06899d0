// Wall-clock readings (src/queries/insights/common/time.ts): the UTC shortcut and the remembered
// readings answer what Intl says, across a DST change.
import { describe, expect, it } from 'vitest'
import { instantOf, wallOf } from '../../../../src/queries/insights/common/time.ts'

/** The reading as Intl gives it, computed here without the module's shortcuts. */
function intlWall(instant: number, tz: string): number {
  const f = new Intl.DateTimeFormat('en-US', {
    timeZone: tz,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  })
  const p = Object.fromEntries(f.formatToParts(new Date(instant)).map((x) => [x.type, Number(x.value)]))
  return Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!, instant % 1000)
}

describe('wallOf', () => {
  // 2026-03-29 01:00 UTC: Paris goes from +01:00 to +02:00
  const around = Array.from({ length: 49 }, (_, i) => Date.UTC(2026, 2, 28, 12) + i * 1_800_000 + 123)

  it('reads UTC instants as themselves', () => {
    for (const t of around) expect(wallOf(t, 'UTC')).toBe(intlWall(t, 'UTC'))
  })

  it('answers the same reading the first time and when asked again', () => {
    for (let round = 0; round < 2; round++) {
      for (const t of around) expect(wallOf(t, 'Europe/Paris')).toBe(intlWall(t, 'Europe/Paris'))
    }
    expect(wallOf(Date.UTC(2026, 2, 29, 0, 30), 'Europe/Paris')).toBe(Date.UTC(2026, 2, 29, 1, 30))
    expect(wallOf(Date.UTC(2026, 2, 29, 1, 30), 'Europe/Paris')).toBe(Date.UTC(2026, 2, 29, 3, 30))
    expect(instantOf(Date.UTC(2026, 2, 29, 3, 30), 'Europe/Paris')).toBe(Date.UTC(2026, 2, 29, 1, 30))
  })
})

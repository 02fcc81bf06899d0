import { describe, expect, it } from 'vitest'
import { parsePosition, progressLine, progressView } from '../../../src/projectors/replay-command.ts'

const p = {
  phase: 'build' as const,
  position: 120,
  end: 400,
  events: 9000,
  eventsPerSecond: 3000,
  etaSeconds: 2,
}

describe('replay progress view', () => {
  it('prints position, events, rate and ETA', () => {
    expect(progressLine(p)).toBe('replay build: seq 120/400, 9000 events, 3000 events/s, ETA 2s')
    expect(progressLine({ ...p, etaSeconds: null })).toMatch(/ETA \?$/)
  })

  it('redraws in place on a terminal and writes lines otherwise', () => {
    const write = (tty: boolean) => {
      const out: string[] = []
      const view = progressView({ isTTY: tty, write: (s: string) => out.push(s) } as never)
      view.update(p)
      view.end()
      return out
    }
    expect(write(true)).toEqual([`\r${progressLine(p)}\x1b[K`, '\n'])
    expect(write(false)).toEqual([`${progressLine(p)}\n`])
  })

  it('reads --from/--to as a sequence or a time', () => {
    expect(parsePosition('42')).toBe(42)
    expect(parsePosition('2024-01-02T00:00:00Z')).toEqual(new Date('2024-01-02T00:00:00Z'))
    expect(parsePosition(undefined)).toBeUndefined()
    expect(() => parsePosition('soon')).toThrow(/not a sequence or a time/)
  })
})

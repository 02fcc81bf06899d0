import { type Logger, pino } from 'pino'

export type { Logger }

export function createLogger(level: string, bindings: Record<string, unknown> = {}): Logger {
  return pino({ level, base: { service: 'burrow', ...bindings } })
}

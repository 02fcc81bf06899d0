// What the console's browser tests share: where screenshots go, and event times relative to today.
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

/** Screenshots go to a temp folder, or to docs/console/ with CONSOLE_SCREENSHOTS=1 (the docs' pictures). */
export const SHOTS = process.env.CONSOLE_SCREENSHOTS
  ? resolve(import.meta.dirname, '../../../docs/console')
  : join(tmpdir(), 'burrow-console-screenshots')

const DAY = 86_400_000
const midnight = Math.floor(Date.now() / DAY) * DAY

/** `daysAgo` days before today (UTC), at `time` (`HH:MM:SS`), as an ISO timestamp. */
export const at = (daysAgo: number, time: string) =>
  new Date(midnight - daysAgo * DAY).toISOString().slice(0, 10) + `T${time}.000Z`

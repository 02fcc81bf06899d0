// What the console's browser tests share: where screenshots go, and event times relative to today.
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { Browser, Page } from 'playwright-core'

/** Screenshots go to a temp folder, or to docs/console/ with CONSOLE_SCREENSHOTS=1 (the docs' pictures). */
export const SHOTS = process.env.CONSOLE_SCREENSHOTS
  ? resolve(import.meta.dirname, '../../../docs/console')
  : join(tmpdir(), 'burrow-console-screenshots')

const DAY = 86_400_000
const midnight = Math.floor(Date.now() / DAY) * DAY

/** `daysAgo` days before today (UTC), at `time` (`HH:MM:SS`), as an ISO timestamp. */
export const at = (daysAgo: number, time: string) =>
  new Date(midnight - daysAgo * DAY).toISOString().slice(0, 10) + `T${time}.000Z`

/**
 * A console page of the size the screenshots are taken at. Its script errors, and console errors
 * other than the 40x answers a test provokes, go into `errors` (each file fails a test on them).
 */
export async function consolePage(browser: Browser, errors: string[]): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1360, height: 900 } })
  page.on('pageerror', (err) => errors.push(err.message))
  page.on('console', (m) => {
    if (m.type() === 'error' && !/status of (40\d)/.test(m.text())) errors.push(m.text())
  })
  return page
}

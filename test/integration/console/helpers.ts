// What the console's browser tests share: where screenshots go, event times relative to today, a
// Burrow with a project, its events and a signed-in page, and the check after each test.
import { mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { expect, type TestContext } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import { launchChromium } from '../../harness/browser.ts'
import { api, createTestKey, createTestProject, startTestBurrow } from '../../harness/index.ts'
import { until } from '../dashboards/helpers.ts'

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

/** A console page signed in with `key` on project `projectId` (set before the page's scripts run). */
export async function signedInPage(
  browser: Browser,
  errors: string[],
  projectId: number,
  key: string,
): Promise<Page> {
  const page = await consolePage(browser, errors)
  await page.addInitScript(
    ([k, id]) => {
      sessionStorage.setItem('burrow.personal_api_key', k)
      sessionStorage.setItem('burrow.project_id', id)
    },
    [key, String(projectId)] as const,
  )
  return page
}

/**
 * Captures `events` through /batch/ with the project's API key and waits until ClickHouse has
 * every one of them (the pages read ClickHouse); fails the hook otherwise.
 */
export async function captureAndProject(
  burrowUrl: string,
  project: Pick<Project, 'id' | 'api_token'>,
  call: ReturnType<typeof api>,
  events: object[],
): Promise<void> {
  const res = await fetch(`${burrowUrl}/batch/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: project.api_token, batch: events }),
  })
  expect(res.status).toBe(200)
  const rows = await until(
    async () => {
      const r = await call('POST', `/api/projects/${project.id}/query/`, {
        query: { kind: 'HogQLQuery', query: 'SELECT count() FROM events' },
        refresh: 'force_blocking',
      })
      return Number(r.body.results?.[0]?.[0] ?? 0)
    },
    (n) => n === events.length,
  )
  expect(rows).toBe(events.length)
}

/** For afterEach: a failed test leaves a screenshot of its page; any page error fails the test. */
export async function checkPage(ctx: TestContext, page: Page, errors: string[]): Promise<void> {
  if (ctx.task.result?.state === 'fail') {
    const name = `failed-${ctx.task.name.slice(0, 20).replace(/\W+/g, '-')}`
    await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true })
  }
  expect(errors.splice(0)).toEqual([])
}

/** What a console browser test works with. */
export interface ConsoleFixture {
  burrow: RunningBurrow
  project: Project
  key: string
  call: ReturnType<typeof api>
  browser: Browser
  page: Page
}

/**
 * Burrow, a new project named `name` with `events` captured and projected, a key of every scope,
 * and Chromium with a page signed in on the project (its errors go into `errors`).
 */
export async function startConsole(
  name: string,
  events: object[],
  errors: string[],
): Promise<ConsoleFixture> {
  mkdirSync(SHOTS, { recursive: true })
  const burrow = await startTestBurrow({ API_RATE_LIMIT_PER_MINUTE: '100000' })
  const project = await createTestProject(name)
  const key = await createTestKey(['*'])
  const call = api(burrow.url, key)
  await captureAndProject(burrow.url, project, call, events)
  const browser = await launchChromium()
  const page = await signedInPage(browser, errors, project.id, key)
  return { burrow, project, key, call, browser, page }
}

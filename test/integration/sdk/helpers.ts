// Helpers of the SDK contract tests: a browser posthog-js treats as a person, and polling.
import { type Browser, chromium, type Page } from 'playwright-core'

const CHROMIUM = '/usr/bin/chromium'

/** Debian's Chromium, headless, without the marks posthog-js takes for a bot (navigator.webdriver). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--disable-blink-features=AutomationControlled',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
}

/**
 * A tab with a regular desktop Chrome user agent: posthog-js drops events from user agents that
 * look like bots, HeadlessChrome included, so this lets the SDK run with its defaults.
 */
export function humanTab(browser: Browser): Promise<Page> {
  return browser.newPage({
    userAgent:
      'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36',
  })
}

/** Calls `fn` until `ok` holds or `timeoutMs` passes, and returns its last value. */
export async function until<T>(
  fn: () => Promise<T> | T,
  ok: (v: T) => boolean,
  timeoutMs = 30_000,
  pauseMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await fn()
    if (ok(v) || Date.now() > deadline) return v
    await new Promise((r) => setTimeout(r, pauseMs))
  }
}

/** `until` for what the projector writes in the background (events, persons): a longer wait. */
export const untilProjected = <T>(fn: () => Promise<T> | T, ok: (v: T) => boolean) =>
  until(fn, ok, 30_000, 200)

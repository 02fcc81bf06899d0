// Debian's Chromium, headless, as the browser tests launch it.
import { type Browser, chromium } from 'playwright-core'

export const CHROMIUM = '/usr/bin/chromium'

/** A user agent of a regular desktop Chrome: posthog-js drops events from HeadlessChrome. */
export const DESKTOP_CHROME_UA =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36'

/** Headless Chromium without a sandbox (containers), background traffic or the webdriver flag. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      // posthog-js treats navigator.webdriver as a bot and drops its events
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

// htm bound to Preact: JSX-like templates that the browser runs as they are (no build step).
import { h } from 'preact'
import htm from 'htm'

/** Tagged template producing Preact elements: html`<div class="x">${child}</div>`. */
export const html = htm.bind(h)

// The HogQL editor: a plain textarea (native editing, undo, screen readers) over a highlighted copy of
// its text. Ctrl-Enter (⌘-Enter) runs; an error range from the API is underlined in place.
import { useRef } from 'preact/hooks'
import { html } from '../lib/html.js'
import { highlightPieces } from '../lib/hogql-tokens.js'

export function HogQLEditor({ value, onChange, onRun, errorStart, errorEnd, id = 'hogql' }) {
  const pre = useRef(null)
  const pieces = highlightPieces(value, errorStart, errorEnd)
  const sync = (e) => {
    if (pre.current) {
      pre.current.scrollTop = e.currentTarget.scrollTop
      pre.current.scrollLeft = e.currentTarget.scrollLeft
    }
  }
  return html`<div class="editor">
    <pre ref=${pre} aria-hidden="true"><code>${pieces.map((p) =>
      p.err
        ? html`<mark class="tok-${p.type} err">${p.text}</mark>`
        : html`<span class="tok-${p.type}">${p.text}</span>`,
    )}${'\n'}</code></pre>
    <textarea
      id=${id}
      spellcheck="false"
      autocomplete="off"
      aria-describedby="${id}-help"
      value=${value}
      onInput=${(e) => onChange(e.currentTarget.value)}
      onScroll=${sync}
      onKeyDown=${(e) => {
        if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
          e.preventDefault()
          onRun()
        }
      }}
    ></textarea>
  </div>`
}

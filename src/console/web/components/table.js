// A results table that stays fast with 50,000 rows: only the rows in view (and a margin) are in the
// DOM; spacer rows keep the scroll height. Rows have one fixed height so positions are arithmetic.
import { useState } from 'preact/hooks'
import { html } from '../lib/html.js'
import { cell } from '../lib/format.js'

const ROW = 30
const MARGIN = 15

export function VirtualTable({ columns, rows, height = 420, label = 'Results', onRow }) {
  const [top, setTop] = useState(0)
  const view = Math.min(height, (rows.length + 1) * ROW + 4)
  const first = Math.max(0, Math.floor(top / ROW) - MARGIN)
  const last = Math.min(rows.length, Math.ceil((top + view) / ROW) + MARGIN)
  return html`<div
    class="vtable"
    style="max-height:${height}px"
    tabindex="0"
    role="region"
    aria-label="${label}, ${rows.length} rows"
    onScroll=${(e) => setTop(e.currentTarget.scrollTop)}
  >
    <table>
      <thead>
        <tr>
          ${columns.map((c) => html`<th scope="col">${c}</th>`)}
        </tr>
      </thead>
      <tbody>
        ${first > 0 ? html`<tr class="spacer" style="height:${first * ROW}px" aria-hidden="true"></tr>` : null}
        ${rows.slice(first, last).map(
          (r, i) =>
            html`<tr
              key=${first + i}
              class=${onRow ? 'clickable' : ''}
              onClick=${onRow ? () => onRow(r, first + i) : undefined}
            >
              ${(Array.isArray(r) ? r : columns.map((c) => r[c])).map((v) => {
                const t = cell(v)
                return html`<td title=${t.length > 40 ? t : undefined}>${t}</td>`
              })}
            </tr>`,
        )}
        ${
          last < rows.length
            ? html`<tr class="spacer" style="height:${(rows.length - last) * ROW}px" aria-hidden="true"></tr>`
            : null
        }
      </tbody>
    </table>
  </div>`
}

// A saved insight's result as a dashboard tile shows it: trends as lines, funnels as bars, paths as
// a Sankey diagram, tables (HogQL, events) as rows, anything else as its numbers. Used by the
// dashboards page and the shared page alike.
import { html } from '../lib/html.js'
import { num, pct } from '../lib/format.js'
import { toEpochSeconds } from '../lib/chart-shape.js'
import { TimeChart } from './time-chart.js'
import { Sankey } from './sankey.js'

const sourceOf = (query) => (query?.source ? query.source : query)

export function insightTitle(insight) {
  return insight.name || insight.derived_name || `Insight ${insight.short_id}`
}

export function InsightView({ insight, height = 200 }) {
  const result = insight.result
  if (result === null || result === undefined) {
    return html`<p class="hint">Not calculated yet: refresh the dashboard.</p>`
  }
  const source = sourceOf(insight.query)
  const kind = source?.kind
  if (kind === 'TrendsQuery' && Array.isArray(result) && result[0]?.days) {
    return html`<${TimeChart}
        utc
        height=${height}
        x=${result[0].days.map(toEpochSeconds)}
        series=${result.slice(0, 8).map((r) => ({ label: r.label, values: r.data }))}
        label="${insightTitle(insight)}: ${result.map((r) => `${r.label} ${num(r.count)}`).join(', ')}"
      />
      <p class="tile-total">${result.map((r) => html`<span><strong>${num(r.count)}</strong> ${r.label}</span>`)}</p>`
  }
  if (kind === 'FunnelsQuery' && Array.isArray(result) && !Array.isArray(result[0])) {
    const first = result[0]?.count ?? 0
    return html`<ol class="funnel" aria-label="Funnel steps">
      ${result.map(
        (r, i) =>
          html`<li>
            <div class="funnel-label"><strong>${i + 1}. ${r.custom_name ?? r.name}</strong><span>${num(r.count)} · ${pct(first ? r.count / first : 0)}</span></div>
            <div class="funnel-track"><div class="funnel-bar" style="width:${Math.max(0.5, first ? (r.count / first) * 100 : 0)}%"></div></div>
          </li>`,
      )}
    </ol>`
  }
  if (kind === 'PathsQuery' && Array.isArray(result)) {
    return result.length
      ? html`<${Sankey} edges=${result} height=${height} />`
      : html`<p class="hint">No paths.</p>`
  }
  if (Array.isArray(result) && Array.isArray(result[0]) && Array.isArray(insight.columns)) {
    if (result.length === 1 && result[0].length === 1) {
      return html`<p class="big-number" aria-label="${insight.columns[0]}">${num(Number(result[0][0]))}</p>`
    }
    return html`<table class="plain">
      <thead>
        <tr>
          ${insight.columns.map((c) => html`<th scope="col">${c}</th>`)}
        </tr>
      </thead>
      <tbody>
        ${result.slice(0, 20).map(
          (row) =>
            html`<tr>
              ${row.map((v) => html`<td>${typeof v === 'object' ? JSON.stringify(v) : String(v)}</td>`)}
            </tr>`,
        )}
      </tbody>
    </table>`
  }
  return html`<pre class="tile-json">${JSON.stringify(result, null, 1).slice(0, 2000)}</pre>`
}

/** A dashboard's tiles in their layout order: insight charts and text cards. */
export function Tiles({ tiles, onRemove }) {
  return html`<div class="tiles">
    ${tiles.map(
      (t) =>
        html`<article class="tile ${t.text ? 'text-tile' : ''}" aria-label=${t.insight ? insightTitle(t.insight) : 'Text'}>
          ${
            t.insight
              ? html`<header>
                    <h3>${insightTitle(t.insight)}</h3>
                    ${onRemove ? html`<button type="button" class="secondary small" onClick=${() => onRemove(t)} aria-label="Remove ${insightTitle(t.insight)}">Remove</button>` : null}
                  </header>
                  ${t.error ? html`<div class="error" role="alert">${t.error.message}</div>` : html`<${InsightView} insight=${t.insight} />`}
                  <p class="hint">${t.last_refresh ? `Computed ${new Date(t.last_refresh).toLocaleString()}${t.is_cached ? ' (cached)' : ''}` : ''}</p>`
              : html`<div class="text-body">${t.text?.body ?? ''}</div>
                  ${onRemove ? html`<button type="button" class="secondary small" onClick=${() => onRemove(t)} aria-label="Remove text">Remove</button>` : null}`
          }
        </article>`,
    )}
  </div>`
}

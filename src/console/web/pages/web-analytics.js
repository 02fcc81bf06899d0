// Web analytics (PostHog's web analytics dashboard): the overview's five figures for a date range
// against the previous period (WebOverviewQuery), then the top pages, sources, devices and
// countries (WebStatsTableQuery), each tab one breakdown, asked for when it is shown.
import { useEffect, useState } from 'preact/hooks'
import { html } from '../lib/html.js'
import { projectPath } from '../lib/api.js'
import { overviewTiles, statsTable } from '../lib/web-stats.js'
import { Card, ErrorBox } from '../components/ui.js'

const RANGES = [
  ['-24h', 'Last 24 hours'],
  ['-7d', 'Last 7 days'],
  ['-14d', 'Last 14 days'],
  ['-30d', 'Last 30 days'],
  ['-90d', 'Last 90 days'],
]

/**
 * PostHog's tiles of tables: a tab per breakdown (`breakdownBy` of WebStatsTableQuery, its tab, its
 * column's name, and what else PostHog asks for with it: a bounce rate for the pages people land on).
 */
const TABLES = [
  {
    id: 'paths',
    title: 'Paths',
    tabs: [
      ['Page', 'Pages', 'Page', { includeBounceRate: true }],
      ['InitialPage', 'Entry pages', 'Entry page', { includeBounceRate: true }],
      ['ExitPage', 'Exit pages', 'Exit page'],
    ],
  },
  {
    id: 'sources',
    title: 'Sources',
    tabs: [
      ['InitialChannelType', 'Channels', 'Channel'],
      ['InitialReferringDomain', 'Referrers', 'Referring domain'],
      ['InitialUTMSource', 'UTM sources', 'UTM source'],
    ],
  },
  {
    id: 'devices',
    title: 'Devices',
    tabs: [
      ['DeviceType', 'Device types', 'Device type'],
      ['Browser', 'Browsers', 'Browser'],
      ['OS', 'OS', 'OS'],
    ],
  },
  { id: 'geography', title: 'Geography', tabs: [['Country', 'Countries', 'Country']] },
]

/** Runs `query` whenever `deps` change; the answer of an older request never replaces a newer one. */
function useQuery(api, project, query, deps) {
  const [state, setState] = useState({ busy: true, error: null, result: null })
  useEffect(() => {
    const ask = new AbortController()
    setState((s) => ({ ...s, busy: true, error: null }))
    api
      .post(projectPath(project.id, 'query/'), { query, refresh: 'force_blocking' }, ask.signal)
      .then((result) => {
        if (!ask.signal.aborted) setState({ busy: false, error: null, result })
      })
      .catch((error) => {
        if (!ask.signal.aborted) setState({ busy: false, error, result: null })
      })
    return () => ask.abort()
  }, [project.id, ...deps])
  return state
}

/** A change from the previous period: arrow, percentage, green when good news. */
export function Change({ change, label }) {
  if (!change) return null
  const arrow = change.direction === 'up' ? '↑' : change.direction === 'down' ? '↓' : '→'
  const tone = change.good === null ? 'flat' : change.good ? 'good' : 'bad'
  const words = `${change.direction === 'flat' ? 'unchanged' : change.direction} ${Math.abs(change.pct)}% from the previous period`
  return html`<span class="change ${tone}" title=${label ? `${label}: ${words}` : words}
    ><span aria-hidden="true">${arrow} </span>${change.text}</span
  >`
}

function Overview({ api, project, range, compare }) {
  const query = {
    kind: 'WebOverviewQuery',
    dateRange: { date_from: range },
    properties: [],
    compareFilter: { compare },
  }
  const state = useQuery(api, project, query, [range, compare])
  const tiles = state.result ? overviewTiles(state.result.results ?? []) : []
  return html`<${ErrorBox} error=${state.error} />
    <section class="stats web-overview" aria-label="Overview" aria-busy=${state.busy ? 'true' : 'false'}>
      ${tiles.map(
        (t) =>
          html`<div class="stat" data-key=${t.key}>
            <div class="stat-label">${t.label}</div>
            <div class="stat-value">${t.value}</div>
            <div class="stat-note">
              <${Change} change=${t.change} label=${t.label} />
              ${compare && t.previous !== null ? html` <span class="muted">was ${t.previous}</span>` : null}
            </div>
          </div>`,
      )}
    </section>`
}

/** One breakdown's table, drawn from the answer's columns and rows as they come. */
export function StatsTable({ columns, results, breakdownLabel, label }) {
  const t = statsTable(columns, results, breakdownLabel)
  if (!t.rows.length) return html`<p class="hint">No data for this range.</p>`
  return html`<table class="plain web-stats" aria-label=${label}>
    <thead>
      <tr>
        ${t.headers.map((h, i) => html`<th scope="col" class=${t.numeric[i] ? 'n' : ''}>${h}</th>`)}
      </tr>
    </thead>
    <tbody>
      ${t.rows.map(
        (r) =>
          html`<tr style="--fill:${Math.round(r.fill * 1000) / 10}%">
            ${r.cells.map((c, i) =>
              t.numeric[i]
                ? html`<td class="n">${c.text}${c.change ? html` <${Change} change=${c.change} />` : null}</td>`
                : html`<th scope="row" class="breakdown" title=${c.text}>${c.text}</th>`,
            )}
          </tr>`,
      )}
    </tbody>
  </table>`
}

function BreakdownCard({ api, project, spec, range, compare }) {
  const [tab, setTab] = useState(spec.tabs[0][0])
  const [breakdownBy, tabLabel, columnName, extra] = spec.tabs.find(([b]) => b === tab)
  const query = {
    kind: 'WebStatsTableQuery',
    breakdownBy,
    dateRange: { date_from: range },
    properties: [],
    compareFilter: { compare },
    limit: 10,
    ...extra,
  }
  const state = useQuery(api, project, query, [range, compare, breakdownBy])
  return html`<${Card} title=${spec.title} id="web-${spec.id}"
    actions=${
      spec.tabs.length > 1
        ? html`<div class="tabs" role="group" aria-label="${spec.title} breakdown">
            ${spec.tabs.map(
              ([b, l]) =>
                html`<button type="button" class=${b === tab ? 'active' : ''} aria-pressed=${b === tab ? 'true' : 'false'} onClick=${() => setTab(b)}>${l}</button>`,
            )}
          </div>`
        : null
    }>
    <${ErrorBox} error=${state.error} />
    ${
      state.result
        ? html`<${StatsTable}
            columns=${state.result.columns}
            results=${state.result.results}
            breakdownLabel=${columnName}
            label=${tabLabel}
          />`
        : state.busy
          ? html`<p class="hint" aria-live="polite">Loading…</p>`
          : null
    }
  </${Card}>`
}

export function WebAnalyticsPage({ api, project }) {
  const [range, setRange] = useState('-7d')
  const [compare, setCompare] = useState(true)
  return html`<h1>Web analytics</h1>
    <div class="fields web-controls">
      <div>
        <label for="web-range">Date range</label>
        <select id="web-range" value=${range} onChange=${(e) => setRange(e.currentTarget.value)}>
          ${RANGES.map(([v, l]) => html`<option value=${v}>${l}</option>`)}
        </select>
      </div>
      <label class="check"
        ><input type="checkbox" checked=${compare} onChange=${(e) => setCompare(e.currentTarget.checked)} />
        Compare with previous period</label
      >
    </div>
    <${Overview} api=${api} project=${project} range=${range} compare=${compare} />
    <div class="grid2">
      ${TABLES.map(
        (spec) =>
          html`<${BreakdownCard} key=${spec.id} api=${api} project=${project} spec=${spec} range=${range} compare=${compare} />`,
      )}
    </div>`
}

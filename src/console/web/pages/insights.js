// Insights: trends, funnels, retention, lifecycle and paths, each built as the API's query kind
// (TrendsQuery, FunnelsQuery, RetentionQuery, LifecycleQuery, PathsQuery; docs/insights.md,
// docs/persons.md, docs/paths.md) and drawn as PostHog users expect: lines, funnel bars, a
// retention triangle, stacked bars, a Sankey diagram.
import { useState } from 'preact/hooks'
import { html } from '../lib/html.js'
import { num, pct } from '../lib/format.js'
import { toEpochSeconds } from '../lib/chart-shape.js'
import { TimeChart } from '../components/time-chart.js'
import { Sankey } from '../components/sankey.js'
import { Card, ErrorBox } from '../components/ui.js'
import {
  CohortSelect,
  EventInput,
  NameInput,
  RangeSelect,
  SaveInsight,
  cohortFilter,
  seriesNode,
  useDefinitions,
  useRun,
} from '../components/insight-form.js'
import { Lifecycle, Retention } from './insights-cohorts.js'
import { SavedInsights } from './saved-insights.js'

const INTERVALS = ['minute', 'hour', 'day', 'week', 'month']
const MATHS = [
  ['total', 'Total count'],
  ['dau', 'Unique users'],
  ['unique_session', 'Unique sessions'],
]
const KINDS = [
  ['trends', 'Trends'],
  ['funnel', 'Funnel'],
  ['retention', 'Retention'],
  ['lifecycle', 'Lifecycle'],
  ['paths', 'Paths'],
  ['saved', 'Saved insights'],
]

/** Event names seen in the last 90 days, most frequent first (for the pickers' suggestions). */
function Trends({ api, project, defs }) {
  const [cohort, setCohort] = useState('')
  const [series, setSeries] = useState([{ event: '$pageview', math: 'total' }])
  const [breakdown, setBreakdown] = useState('')
  const [interval, setIntervalName] = useState('day')
  const [range, setRange] = useState('-7d')
  const [state, run] = useRun(api, project)
  const submit = (e) => {
    e.preventDefault()
    run({
      kind: 'TrendsQuery',
      series: series.map((s) => seriesNode(s.event, defs, { math: s.math })),
      ...cohortFilter(cohort),
      interval,
      dateRange: { date_from: range },
      ...(breakdown ? { breakdownFilter: { breakdown, breakdown_type: 'event' } } : {}),
    })
  }
  const set = (i, patch) => setSeries(series.map((s, j) => (j === i ? { ...s, ...patch } : s)))
  const results = state.result?.results ?? []
  const x = results[0]?.days?.map(toEpochSeconds) ?? []
  return html`<form class="builder" onSubmit=${submit} aria-label="Trend">
      <fieldset>
        <legend>Series</legend>
        ${series.map(
          (s, i) =>
            html`<div class="series-row">
              <span class="badge" aria-hidden="true">${String.fromCharCode(65 + i)}</span>
              <${EventInput} api=${api} project=${project} defs=${defs}
                id="trend-event-${i}"
                label="Event ${String.fromCharCode(65 + i)}"
                value=${s.event}
                onChange=${(v) => set(i, { event: v })}
              />
              <label for="trend-math-${i}">Measure</label>
              <select
                id="trend-math-${i}"
                value=${s.math}
                onChange=${(e) => set(i, { math: e.currentTarget.value })}
              >
                ${MATHS.map(([v, l]) => html`<option value=${v}>${l}</option>`)}
              </select>
              ${
                series.length > 1
                  ? html`<button
                      type="button"
                      class="secondary small"
                      onClick=${() => setSeries(series.filter((_, j) => j !== i))}
                      aria-label="Remove series ${String.fromCharCode(65 + i)}"
                    >
                      Remove
                    </button>`
                  : null
              }
            </div>`,
        )}
        <button
          type="button"
          class="secondary small"
          onClick=${() => setSeries([...series, { event: '', math: 'total' }])}
          disabled=${series.length >= 8}
        >
          Add series
        </button>
      </fieldset>
      <div class="fields">
        <div><${CohortSelect} id="trend-cohort" defs=${defs} value=${cohort} onChange=${setCohort} /></div>
        <div>
          <${NameInput}
            api=${api}
            project=${project}
            kind="property"
            id="trend-breakdown"
            label="Breakdown by event property"
            value=${breakdown}
            placeholder="none, e.g. $browser"
            onChange=${setBreakdown}
          />
        </div>
        <div>
          <label for="trend-interval">Interval</label
          ><select
            id="trend-interval"
            value=${interval}
            onChange=${(e) => setIntervalName(e.currentTarget.value)}
          >
            ${INTERVALS.map((v) => html`<option value=${v}>${v}</option>`)}
          </select>
        </div>
        <div><${RangeSelect} id="trend-range" value=${range} onChange=${setRange} /></div>
        <div class="submit">
          <button type="submit" disabled=${state.busy}>${state.busy ? 'Calculating…' : 'Show trend'}</button>
        </div>
      </div>
    </form>
    <${ErrorBox} error=${state.error} />
    <${SaveInsight} api=${api} project=${project} query=${state.query} />
    ${
      state.result
        ? html`<${TimeChart}
              utc
              x=${x}
              series=${results.slice(0, 12).map((r) => ({ label: r.label, values: r.data }))}
              label="Trend: ${results.map((r) => `${r.label} ${num(r.count)}`).join(', ')}"
            />
            <table class="plain">
              <thead>
                <tr>
                  <th scope="col">Series</th>
                  <th scope="col" class="n">Total</th>
                </tr>
              </thead>
              <tbody>
                ${results.map(
                  (r) =>
                    html`<tr>
                      <td>${r.label}</td>
                      <td class="n">${num(r.count)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>`
        : null
    }`
}

function Funnel({ api, project, defs }) {
  const [cohort, setCohort] = useState('')
  const [steps, setSteps] = useState(['$pageview', ''])
  const [windowN, setWindowN] = useState(14)
  const [unit, setUnit] = useState('day')
  const [order, setOrder] = useState('ordered')
  const [range, setRange] = useState('-30d')
  const [state, run] = useRun(api, project)
  const submit = (e) => {
    e.preventDefault()
    run({
      kind: 'FunnelsQuery',
      series: steps.filter(Boolean).map((event) => seriesNode(event, defs)),
      ...cohortFilter(cohort),
      dateRange: { date_from: range },
      funnelsFilter: {
        funnelWindowInterval: Number(windowN),
        funnelWindowIntervalUnit: unit,
        funnelOrderType: order,
      },
    })
  }
  const rows =
    Array.isArray(state.result?.results) && !Array.isArray(state.result.results[0])
      ? state.result.results
      : []
  const first = rows[0]?.count ?? 0
  return html`<form class="builder" onSubmit=${submit} aria-label="Funnel">
      <fieldset>
        <legend>Steps</legend>
        ${steps.map(
          (s, i) =>
            html`<div class="series-row">
              <span class="badge" aria-hidden="true">${i + 1}</span>
              <${EventInput} api=${api} project=${project} defs=${defs}
                id="funnel-step-${i}"
                label="Step ${i + 1}"
                value=${s}
                onChange=${(v) => setSteps(steps.map((x, j) => (j === i ? v : x)))}
              />
              ${steps.length > 2 ? html`<button type="button" class="secondary small" onClick=${() => setSteps(steps.filter((_, j) => j !== i))} aria-label="Remove step ${i + 1}">Remove</button>` : null}
            </div>`,
        )}
        <button type="button" class="secondary small" onClick=${() => setSteps([...steps, ''])}>
          Add step
        </button>
      </fieldset>
      <div class="fields">
        <div><${CohortSelect} id="funnel-cohort" defs=${defs} value=${cohort} onChange=${setCohort} /></div>
        <div>
          <label for="funnel-window">Conversion window</label
          ><input
            id="funnel-window"
            type="number"
            min="1"
            value=${windowN}
            onInput=${(e) => setWindowN(e.currentTarget.value)}
          />
        </div>
        <div>
          <label for="funnel-unit">Window unit</label
          ><select id="funnel-unit" value=${unit} onChange=${(e) => setUnit(e.currentTarget.value)}>
            ${['minute', 'hour', 'day', 'week', 'month'].map((u) => html`<option value=${u}>${u}s</option>`)}
          </select>
        </div>
        <div>
          <label for="funnel-order">Step order</label
          ><select id="funnel-order" value=${order} onChange=${(e) => setOrder(e.currentTarget.value)}>
            <option value="ordered">sequential</option>
            <option value="strict">strict</option>
            <option value="unordered">any order</option>
          </select>
        </div>
        <div><${RangeSelect} id="funnel-range" value=${range} onChange=${setRange} /></div>
        <div class="submit">
          <button type="submit" disabled=${state.busy || steps.filter(Boolean).length < 2}>
            ${state.busy ? 'Calculating…' : 'Show funnel'}
          </button>
        </div>
      </div>
    </form>
    <${ErrorBox} error=${state.error} />
    <${SaveInsight} api=${api} project=${project} query=${state.query} />
    ${
      rows.length
        ? html`<ol class="funnel" aria-label="Funnel steps">
            ${rows.map((r, i) => {
              const ratio = first ? r.count / first : 0
              const prev = i ? rows[i - 1].count : r.count
              return html`<li>
                <div class="funnel-label">
                  <strong>${i + 1}. ${r.custom_name ?? r.name}</strong>
                  <span
                    >${num(r.count)} persons · ${pct(ratio)} of step
                    1${i ? ` · ${pct(prev ? r.count / prev : 0)} from step ${i}` : ''}${r.average_conversion_time ? ` · avg ${Math.round(r.average_conversion_time)} s` : ''}</span
                  >
                </div>
                <div class="funnel-track">
                  <div class="funnel-bar" style="width:${Math.max(0.5, ratio * 100)}%"></div>
                </div>
              </li>`
            })}
          </ol>`
        : null
    }`
}

const PATH_TYPES = [
  ['$pageview', 'Page views'],
  ['$screen', 'Screens'],
  ['custom_event', 'Custom events'],
  ['', 'All events'],
]

/** Paths (PathsQuery, docs/paths.md): the most travelled steps, from a start and/or to an end. */
function Paths({ api, project, defs }) {
  const [cohort, setCohort] = useState('')
  const [type, setType] = useState('$pageview')
  const [start, setStart] = useState('')
  const [end, setEnd] = useState('')
  const [steps, setSteps] = useState(5)
  const [range, setRange] = useState('-7d')
  const [state, run] = useRun(api, project)
  const submit = (e) => {
    e.preventDefault()
    run({
      kind: 'PathsQuery',
      properties: [],
      ...cohortFilter(cohort),
      dateRange: { date_from: range },
      pathsFilter: {
        includeEventTypes: type ? [type] : [],
        ...(start.trim() ? { startPoint: start.trim() } : {}),
        ...(end.trim() ? { endPoint: end.trim() } : {}),
        stepLimit: Number(steps),
      },
    })
  }
  const edges = Array.isArray(state.result?.results) ? state.result.results : null
  return html`<form class="builder" onSubmit=${submit} aria-label="Paths">
      <div class="fields">
        <div>
          <label for="paths-type">Event type</label
          ><select id="paths-type" value=${type} onChange=${(e) => setType(e.currentTarget.value)}>
            ${PATH_TYPES.map(([v, l]) => html`<option value=${v}>${l}</option>`)}
          </select>
        </div>
        <div>
          <label for="paths-start">Starts at</label
          ><input id="paths-start" value=${start} placeholder="any, e.g. https://example.com/pricing" onInput=${(e) => setStart(e.currentTarget.value)} />
        </div>
        <div>
          <label for="paths-end">Ends at</label
          ><input id="paths-end" value=${end} placeholder="any" onInput=${(e) => setEnd(e.currentTarget.value)} />
        </div>
        <div>
          <label for="paths-steps">Step limit</label
          ><input id="paths-steps" type="number" min="2" max="20" value=${steps} onInput=${(e) => setSteps(e.currentTarget.value)} />
        </div>
        <div><${CohortSelect} id="paths-cohort" defs=${defs} value=${cohort} onChange=${setCohort} /></div>
        <div><${RangeSelect} id="paths-range" value=${range} onChange=${setRange} /></div>
        <div class="submit">
          <button type="submit" disabled=${state.busy}>${state.busy ? 'Calculating…' : 'Show paths'}</button>
        </div>
      </div>
    </form>
    <${ErrorBox} error=${state.error} />
    <${SaveInsight} api=${api} project=${project} query=${state.query} />
    ${
      edges
        ? edges.length
          ? html`<${Sankey} edges=${edges} />`
          : html`<p class="hint">No paths in this range.</p>`
        : null
    }`
}

const BUILDERS = {
  trends: Trends,
  funnel: Funnel,
  retention: Retention,
  lifecycle: Lifecycle,
  paths: Paths,
  saved: SavedInsights,
}

export function InsightsPage({ api, project, route }) {
  const kind = BUILDERS[route[0]] ? route[0] : 'trends'
  const defs = useDefinitions(api, project)
  const Builder = BUILDERS[kind]
  return html`<h1>Insights</h1>
    <nav class="tabs" aria-label="Insight kind">
      ${KINDS.map(([k, label]) => html`<a href="#/insights/${k}" class=${k === kind ? 'active' : ''} aria-current=${k === kind ? 'page' : undefined}>${label}</a>`)}
    </nav>
    <${Card}><${Builder} key=${kind} api=${api} project=${project} defs=${defs} /></${Card}>`
}

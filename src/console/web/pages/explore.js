// Explore: HogQL in, table and chart out. Queries run in the background (refresh `force_async`):
// the page follows the status stream (`Accept: text/event-stream` on GET …/query/{id}/), shows rows
// read and time, and Cancel sends DELETE …/query/{id}/.
import { useEffect, useRef, useState } from 'preact/hooks'
import { html } from '../lib/html.js'
import { ApiError, projectPath, segment } from '../lib/api.js'
import { num } from '../lib/format.js'
import { chartShape, toEpochSeconds } from '../lib/chart-shape.js'
import { HogQLEditor } from '../components/editor.js'
import { VirtualTable } from '../components/table.js'
import { TimeChart } from '../components/time-chart.js'
import { BarChart } from '../components/bar-chart.js'
import { Card, ErrorBox } from '../components/ui.js'

const SAVED = 'burrow.explore.query'
const DEFAULT_QUERY = `SELECT toStartOfHour(timestamp) AS hour, count() AS events
FROM events
WHERE timestamp > now() - INTERVAL 1 DAY
GROUP BY hour
ORDER BY hour`

function ResultChart({ result, kind, shape }) {
  const { columns, results: rows } = result
  if (kind === 'number') {
    const v = rows[0][shape.y[0]]
    return html`<div class="big-number" role="img" aria-label="${columns[shape.y[0]]}: ${num(v)}">
      <span>${num(v)}</span><small>${columns[shape.y[0]]}</small>
    </div>`
  }
  const ys = shape.y.filter((i) => i !== shape.x).slice(0, 8)
  if (kind === 'line') {
    const order = rows.map((r, i) => [toEpochSeconds(r[shape.x]), i]).sort((a, b) => a[0] - b[0])
    return html`<${TimeChart}
      x=${order.map((o) => o[0])}
      series=${ys.map((i) => ({ label: columns[i], values: order.map((o) => Number(rows[o[1]][i])) }))}
      utc
      label="Line chart of ${ys.map((i) => columns[i]).join(', ')} over ${columns[shape.x]}"
    />`
  }
  return html`<${BarChart}
    categories=${rows.map((r) => String(r[shape.x]))}
    series=${ys.map((i) => ({ label: columns[i], values: rows.map((r) => Number(r[i])) }))}
    label="Bar chart of ${ys.map((i) => columns[i]).join(', ')} by ${columns[shape.x]}"
  />`
}

export function ExplorePage({ api, project }) {
  const [query, setQuery] = useState(() => sessionStorage.getItem(SAVED) ?? DEFAULT_QUERY)
  const [running, setRunning] = useState(null)
  const [progress, setProgress] = useState(null)
  const [result, setResult] = useState(null)
  const [error, setError] = useState(null)
  const [view, setView] = useState('table')
  const ctl = useRef(null)

  useEffect(() => sessionStorage.setItem(SAVED, query), [query])
  useEffect(() => () => ctl.current?.abort(), [])

  const run = async () => {
    if (running) return
    const id = `console-${crypto.randomUUID()}`
    const abort = new AbortController()
    ctl.current = abort
    setRunning(id)
    setError(null)
    setProgress(null)
    const started = performance.now()
    try {
      let res = await api.post(
        projectPath(project.id, 'query/'),
        { query: { kind: 'HogQLQuery', query }, client_query_id: id, refresh: 'force_async' },
        abort.signal,
      )
      if (res.query_status && !res.results) {
        let final = res.query_status
        if (!final.complete) {
          await api.stream(
            projectPath(project.id, `query/${segment('token', id)}/`),
            (name, data) => {
              if (name !== 'status') return
              final = data.query_status
              setProgress({ ...(final.query_progress ?? {}), ms: performance.now() - started })
            },
            abort.signal,
          )
        }
        if (final.error) throw new ApiError(400, { detail: final.error_message ?? 'The query failed.' })
        if (!final.complete)
          throw new ApiError(0, { detail: 'The status stream ended before the query finished.' })
        res = final.results
      }
      setResult({ ...res, ms: performance.now() - started })
      const shape = chartShape(res.columns ?? [], res.types ?? [], res.results ?? [])
      setView((v) => (v !== 'table' && !shape.kinds.includes(v) ? 'table' : v))
    } catch (err) {
      if (abort.signal.aborted) setError('Query cancelled.')
      else setError(err)
    } finally {
      setRunning(null)
      ctl.current = null
    }
  }

  const cancel = async () => {
    const id = running
    ctl.current?.abort()
    if (id) await api.del(projectPath(project.id, `query/${segment('token', id)}/`)).catch(() => {})
  }

  const shape = result ? chartShape(result.columns ?? [], result.types ?? [], result.results ?? []) : null
  const views = shape ? ['table', ...shape.kinds] : ['table']
  return html`<h1>Explore</h1>
    <${Card}>
      <label for="hogql" class="block">HogQL</label>
      <${HogQLEditor}
        value=${query}
        onChange=${setQuery}
        onRun=${run}
        errorStart=${error instanceof ApiError ? error.start : null}
        errorEnd=${error instanceof ApiError ? error.end : null}
      />
      <div class="row">
        <button type="button" onClick=${run} disabled=${!!running}>Run</button>
        ${running ? html`<button type="button" class="secondary" onClick=${cancel}>Cancel</button>` : null}
        <span id="hogql-help" class="muted">Ctrl-Enter (⌘-Enter) runs. Tables: events, persons, person_distinct_ids, groups, feature_flag_usage.</span>
      </div>
      ${
        running
          ? html`<p class="progress" role="status">
              Running… ${progress ? `${num(progress.rows_read ?? 0)} rows read${progress.estimated_rows_total ? ` of ~${num(progress.estimated_rows_total)}` : ''}, ${(progress.ms / 1000).toFixed(1)} s` : ''}
            </p>`
          : null
      }
      <${ErrorBox} error=${error} />
    </${Card}>
    ${
      result
        ? html`<${Card}
          title="Results"
          id="results"
          actions=${html`<div class="tabs" role="tablist" aria-label="Result view">
            ${views.map(
              (v) =>
                html`<button
                  type="button"
                  role="tab"
                  aria-selected=${view === v}
                  class=${view === v ? 'active' : ''}
                  onClick=${() => setView(v)}
                >
                  ${v}
                </button>`,
            )}
          </div>`}
        >
          <p class="muted" role="status">${num(result.results.length)} rows${result.hasMore ? ' (more exist: raise the LIMIT)' : ''} in ${(result.ms / 1000).toFixed(2)} s${result.is_cached ? ', cached' : ''}</p>
          ${
            view === 'table'
              ? html`<${VirtualTable} columns=${result.columns} rows=${result.results} />`
              : html`<${ResultChart} result=${result} kind=${view} shape=${shape} />`
          }
        </${Card}>`
        : null
    }`
}

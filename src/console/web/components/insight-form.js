// Shared parts of the insight builders: the date range and event pickers and the query runner.
import { useEffect, useState } from 'preact/hooks'
import { html } from '../lib/html.js'
import { projectPath } from '../lib/api.js'

export const RANGES = [
  ['-24h', 'Last 24 hours'],
  ['-7d', 'Last 7 days'],
  ['-14d', 'Last 14 days'],
  ['-30d', 'Last 30 days'],
  ['-90d', 'Last 90 days'],
  ['-180d', 'Last 180 days'],
  ['-1y', 'Last year'],
]
export function useEventNames(api, project) {
  const [names, setNames] = useState([])
  useEffect(() => {
    api
      .post(projectPath(project.id, 'query/'), {
        query: {
          kind: 'HogQLQuery',
          query:
            'SELECT event, count() AS c FROM events WHERE timestamp > now() - INTERVAL 90 DAY GROUP BY event ORDER BY c DESC LIMIT 200',
        },
      })
      .then((r) => setNames(r.results.map((row) => row[0])))
      .catch(() => {})
  }, [project.id])
  return names
}

export function EventInput({ id, label, value, onChange }) {
  return html`<label for=${id}>${label}</label>
    <input
      id=${id}
      list="event-names"
      value=${value}
      placeholder="$pageview"
      onInput=${(e) => onChange(e.currentTarget.value)}
    />`
}

export function RangeSelect({ id, value, onChange }) {
  return html`<label for=${id}>Date range</label>
    <select id=${id} value=${value} onChange=${(e) => onChange(e.currentTarget.value)}>
      ${RANGES.map(([v, l]) => html`<option value=${v}>${l}</option>`)}
    </select>`
}

export function useRun(api, project) {
  const [state, setState] = useState({ busy: false, error: null, result: null })
  const run = async (query) => {
    setState((s) => ({ ...s, busy: true, error: null }))
    try {
      const result = await api.post(projectPath(project.id, 'query/'), { query, refresh: 'force_blocking' })
      setState({ busy: false, error: null, result })
    } catch (error) {
      setState({ busy: false, error, result: null })
    }
  }
  return [state, run]
}

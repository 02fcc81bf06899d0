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

/** The project's actions and cohorts, for the pickers: an action is picked as `action: <name>` in any
 * event field, a cohort from the "Persons in cohort" select (docs/actions.md, docs/cohorts.md). */
export function useDefinitions(api, project) {
  const [defs, setDefs] = useState({ actions: [], cohorts: [] })
  useEffect(() => {
    Promise.all([
      api.get(projectPath(project.id, 'actions/')).catch(() => ({ results: [] })),
      api.get(projectPath(project.id, 'cohorts/?limit=200')).catch(() => ({ results: [] })),
    ]).then(([a, c]) => setDefs({ actions: a.results, cohorts: c.results }))
  }, [project.id])
  return defs
}

const ACTION = 'action: '
export const actionOption = (a) => `${ACTION}${a.name}`
const actionOf = (value, defs) =>
  value?.startsWith(ACTION) ? defs.actions.find((a) => a.name === value.slice(ACTION.length)) : undefined

/** A series or funnel step: an ActionsNode when an action was picked, else an EventsNode. */
export function seriesNode(value, defs, extra = {}) {
  const action = actionOf(value, defs)
  return action
    ? { kind: 'ActionsNode', id: action.id, ...extra }
    : { kind: 'EventsNode', event: value || null, ...extra }
}

/** A retention entity, in the same way. */
export function retentionEntity(value, defs) {
  const action = actionOf(value, defs)
  return action ? { id: action.id, type: 'actions' } : { id: value, type: 'events' }
}

/** The cohort filter a query carries when a cohort is picked. */
export const cohortFilter = (cohort) =>
  cohort ? { properties: [{ type: 'cohort', key: 'id', value: Number(cohort) }] } : {}

export function CohortSelect({ id, defs, value, onChange }) {
  return html`<label for=${id}>Persons in cohort</label>
    <select id=${id} value=${value} onChange=${(e) => onChange(e.currentTarget.value)}>
      <option value="">everyone</option>
      ${defs.cohorts.map((c) => html`<option value=${String(c.id)}>${c.name || `#${c.id}`}</option>`)}
    </select>`
}

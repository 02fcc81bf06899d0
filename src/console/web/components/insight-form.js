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
/** The project's event names, most recently seen first (the taxonomy: GET …/event_definitions/). */
export function useEventNames(api, project) {
  const [names, setNames] = useState([])
  useEffect(() => {
    api
      .get(projectPath(project.id, 'event_definitions/?limit=200'))
      .then((r) => setNames(r.results.map((d) => d.name)))
      .catch(() => {})
  }, [project.id])
  return names
}

const PATHS = {
  event: (q) => `event_definitions/?limit=20&search=${encodeURIComponent(q)}`,
  property: (q) => `property_definitions/?limit=20&type=event&search=${encodeURIComponent(q)}`,
  person: (q) => `property_definitions/?limit=20&type=person&search=${encodeURIComponent(q)}`,
}

/**
 * Names of the project's taxonomy matching what is typed so far (event names, event or person
 * property names), asked for as the user types (a short pause first) for the input's own datalist.
 */
export function useTaxonomy(api, project, kind, typed) {
  const [names, setNames] = useState([])
  useEffect(() => {
    const ask = new AbortController()
    const t = setTimeout(() => {
      api
        .get(projectPath(project.id, PATHS[kind](typed ?? '')), ask.signal)
        .then((r) => setNames(r.results.map((d) => d.name)))
        .catch(() => {})
    }, 120)
    return () => {
      clearTimeout(t)
      ask.abort()
    }
  }, [project.id, kind, typed])
  return names
}

/** A text input offering the taxonomy's names as you type (kind: event, property or person). */
export function NameInput({ api, project, kind, id, label, value, onChange, placeholder, extra = [] }) {
  const names = [...extra, ...useTaxonomy(api, project, kind, value)]
  return html`<label for=${id}>${label}</label>
    <input
      id=${id}
      list="${id}-names"
      value=${value}
      placeholder=${placeholder ?? (kind === 'event' ? '$pageview' : '$browser')}
      autocomplete="off"
      onInput=${(e) => onChange(e.currentTarget.value)}
    />
    <datalist id="${id}-names">${names.map((n) => html`<option value=${n}></option>`)}</datalist>`
}

/**
 * The event picker of the insight builders: the taxonomy's event names as you type, and with
 * `defs` (useDefinitions) the project's actions as `action: <name>` first.
 */
export function EventInput({ api, project, id, label, value, onChange, defs }) {
  const extra = defs ? defs.actions.map(actionOption) : []
  return html`<${NameInput} api=${api} project=${project} kind="event" id=${id} label=${label} value=${value} onChange=${onChange} extra=${extra} />`
}

export function RangeSelect({ id, value, onChange }) {
  return html`<label for=${id}>Date range</label>
    <select id=${id} value=${value} onChange=${(e) => onChange(e.currentTarget.value)}>
      ${RANGES.map(([v, l]) => html`<option value=${v}>${l}</option>`)}
    </select>`
}

export function useRun(api, project) {
  const [state, setState] = useState({ busy: false, error: null, result: null, query: null })
  const run = async (query) => {
    setState((s) => ({ ...s, busy: true, error: null }))
    try {
      const result = await api.post(projectPath(project.id, 'query/'), { query, refresh: 'force_blocking' })
      setState({ busy: false, error: null, result, query })
    } catch (error) {
      setState({ busy: false, error, result: null, query: null })
    }
  }
  return [state, run]
}

/** Saves the query last run as an insight (POST …/insights/, an InsightVizNode around it). */
export function SaveInsight({ api, project, query, onSaved }) {
  const [name, setName] = useState('')
  const [busy, setBusy] = useState(false)
  const [saved, setSaved] = useState(null)
  const [error, setError] = useState(null)
  if (!query) return null
  const save = async (e) => {
    e.preventDefault()
    setBusy(true)
    setError(null)
    try {
      const insight = await api.post(projectPath(project.id, 'insights/'), {
        name: name.trim() || null,
        query: { kind: 'InsightVizNode', source: query },
        saved: true,
      })
      setSaved(insight)
      onSaved?.(insight)
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  return html`<form class="save-insight" onSubmit=${save} aria-label="Save insight">
    <label for="save-name">Insight name</label>
    <input id="save-name" value=${name} placeholder="e.g. Weekly pageviews" onInput=${(e) => setName(e.currentTarget.value)} />
    <button type="submit" class="secondary" disabled=${busy}>${busy ? 'Saving…' : 'Save insight'}</button>
    ${saved ? html`<span role="status">Saved as <a href="#/insights/saved">${saved.name ?? saved.short_id}</a></span>` : null}
    ${error ? html`<span class="error" role="alert">${error.detail ?? String(error)}</span>` : null}
  </form>`
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

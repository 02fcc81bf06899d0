// Cohorts and actions (docs/cohorts.md, docs/actions.md): list them, make one from a person
// property and a behaviour (cohorts) or from an event and a URL or an element (actions), see a
// cohort's count and members as its calculation finishes. Everything goes through the public API.
import { useEffect, useState } from 'preact/hooks'
import { html } from '../lib/html.js'
import { projectPath } from '../lib/api.js'
import { num } from '../lib/format.js'
import { Card, ErrorBox } from '../components/ui.js'
import { EventInput } from '../components/insight-form.js'

/** Refused input as the API words it, with the field it names. */
const refusal = (err) => (err?.attr ? `${err.detail} (${err.attr})` : err)

function cohortState(c) {
  if (c.is_calculating) return 'calculating…'
  if (c.errors_calculating) return `failed ${c.errors_calculating}×`
  return c.last_calculation ? 'up to date' : '—'
}

export function CohortsPage({ api, project }) {
  const [cohorts, setCohorts] = useState(null)
  const [error, setError] = useState(null)
  const [selected, setSelected] = useState(null)
  const [members, setMembers] = useState(null)
  const [form, setForm] = useState({
    name: '',
    key: 'plan',
    operator: 'exact',
    value: '',
    event: '',
    days: 30,
  })
  const load = () =>
    api
      .get(projectPath(project.id, 'cohorts/?limit=200'))
      .then((r) => setCohorts(r.results))
      .catch(setError)
  useEffect(() => {
    load()
    const t = setInterval(load, 2000)
    return () => clearInterval(t)
  }, [project.id])
  useEffect(() => {
    if (!selected) return
    api
      .get(projectPath(project.id, `cohorts/${selected}/persons/?limit=100`))
      .then((r) => setMembers(r.results))
      .catch(setError)
  }, [selected, cohorts?.find((c) => c.id === selected)?.last_calculation])
  const set = (patch) => setForm({ ...form, ...patch })
  const submit = async (e) => {
    e.preventDefault()
    setError(null)
    const values = []
    if (form.key) {
      const operator = form.operator
      values.push({
        type: 'person',
        key: form.key,
        operator,
        ...(operator === 'is_set' ? {} : { value: form.value }),
      })
    }
    if (form.event) {
      values.push({
        type: 'behavioral',
        key: form.event,
        event_type: 'events',
        value: 'performed_event',
        time_value: Number(form.days),
        time_interval: 'day',
      })
    }
    try {
      const c = await api.post(projectPath(project.id, 'cohorts/'), {
        name: form.name,
        filters: { properties: { type: 'AND', values } },
      })
      setSelected(c.id)
      await load()
    } catch (err) {
      setError(refusal(err))
    }
  }
  const current = cohorts?.find((c) => c.id === selected)
  return html`<h1>Cohorts</h1>
    <${ErrorBox} error=${error} />
    <${Card} title="New cohort" id="new-cohort">
      <form class="builder" onSubmit=${submit} aria-label="New cohort">
        <div class="fields">
          <div>
            <label for="cohort-name">Name</label>
            <input id="cohort-name" required value=${form.name} onInput=${(e) => set({ name: e.currentTarget.value })} />
          </div>
          <div>
            <label for="cohort-key">Person property</label>
            <input id="cohort-key" value=${form.key} onInput=${(e) => set({ key: e.currentTarget.value })} />
          </div>
          <div>
            <label for="cohort-operator">is</label>
            <select id="cohort-operator" value=${form.operator} onChange=${(e) => set({ operator: e.currentTarget.value })}>
              <option value="exact">equal to</option>
              <option value="icontains">containing</option>
              <option value="regex">matching the regex</option>
              <option value="is_set">set</option>
            </select>
          </div>
          <div>
            <label for="cohort-value">Value</label>
            <input id="cohort-value" value=${form.value} onInput=${(e) => set({ value: e.currentTarget.value })} />
          </div>
          <div>
            <${EventInput} api=${api} project=${project} id="cohort-event" label="and performed" value=${form.event} onChange=${(v) => set({ event: v })} />
          </div>
          <div>
            <label for="cohort-days">in the last (days)</label>
            <input id="cohort-days" type="number" min="1" value=${form.days} onInput=${(e) => set({ days: e.currentTarget.value })} />
          </div>
          <div class="submit"><button type="submit">Create cohort</button></div>
        </div>
      </form>
    <//>
    <${Card} title="Cohorts" id="cohort-list">
      <table class="plain" aria-label="Cohorts">
        <thead><tr><th>Name</th><th>Type</th><th>Persons</th><th>State</th><th>Calculated</th></tr></thead>
        <tbody>
          ${(cohorts ?? []).map(
            (c) => html`<tr class=${c.id === selected ? 'selected' : ''}>
              <td><button type="button" class="secondary small" onClick=${() => setSelected(c.id)}>${c.name || `#${c.id}`}</button></td>
              <td>${c.is_static ? 'static' : 'dynamic'}</td>
              <td class="num">${c.count === null ? '—' : num(c.count)}</td>
              <td>${cohortState(c)}</td>
              <td>${c.last_calculation ? new Date(c.last_calculation).toLocaleString() : '—'}</td>
            </tr>`,
          )}
        </tbody>
      </table>
    <//>
    ${
      current
        ? html`<${Card} title=${`Members of ${current.name || `#${current.id}`}`} id="cohort-members">
            <p aria-live="polite">${current.is_calculating ? 'Calculating…' : `${num(current.count ?? 0)} persons`}</p>
            <table class="plain" aria-label="Members">
              <thead><tr><th>Person</th><th>Distinct ids</th></tr></thead>
              <tbody>
                ${(members ?? []).map((p) => html`<tr><td>${p.name}</td><td>${p.distinct_ids.join(', ')}</td></tr>`)}
              </tbody>
            </table>
          <//>`
        : null
    }`
}

export function ActionsPage({ api, project }) {
  const [actions, setActions] = useState(null)
  const [error, setError] = useState(null)
  const [form, setForm] = useState({
    name: '',
    mode: 'page',
    event: '$pageview',
    url: '',
    matching: 'contains',
    selector: '',
    text: '',
  })
  const load = () =>
    api
      .get(projectPath(project.id, 'actions/'))
      .then((r) => setActions(r.results))
      .catch(setError)
  useEffect(() => {
    load()
  }, [project.id])
  const set = (patch) => setForm({ ...form, ...patch })
  const submit = async (e) => {
    e.preventDefault()
    setError(null)
    const step =
      form.mode === 'page'
        ? { event: form.event || null, ...(form.url ? { url: form.url, url_matching: form.matching } : {}) }
        : {
            event: '$autocapture',
            ...(form.selector ? { selector: form.selector } : {}),
            ...(form.text ? { text: form.text } : {}),
          }
    try {
      await api.post(projectPath(project.id, 'actions/'), { name: form.name, steps: [step] })
      await load()
    } catch (err) {
      setError(refusal(err))
    }
  }
  const describe = (s) =>
    [
      s.event ?? 'any event',
      s.url ? `URL ${s.url_matching ?? 'contains'} ${s.url}` : null,
      s.selector ? `element ${s.selector}` : null,
      s.text ? `text “${s.text}”` : null,
    ]
      .filter(Boolean)
      .join(', ')
  return html`<h1>Actions</h1>
    <${ErrorBox} error=${error} />
    <${Card} title="New action" id="new-action">
      <form class="builder" onSubmit=${submit} aria-label="New action">
        <div class="fields">
          <div>
            <label for="action-name">Name</label>
            <input id="action-name" required value=${form.name} onInput=${(e) => set({ name: e.currentTarget.value })} />
          </div>
          <div>
            <label for="action-mode">Match</label>
            <select id="action-mode" value=${form.mode} onChange=${(e) => set({ mode: e.currentTarget.value })}>
              <option value="page">an event and a URL</option>
              <option value="element">a clicked element</option>
            </select>
          </div>
          ${
            form.mode === 'page'
              ? html`<div><${EventInput} api=${api} project=${project} id="action-event" label="Event" value=${form.event} onChange=${(v) => set({ event: v })} /></div>
                  <div>
                    <label for="action-url">URL</label>
                    <input id="action-url" value=${form.url} onInput=${(e) => set({ url: e.currentTarget.value })} />
                  </div>
                  <div>
                    <label for="action-matching">URL match</label>
                    <select id="action-matching" value=${form.matching} onChange=${(e) => set({ matching: e.currentTarget.value })}>
                      <option value="contains">contains</option>
                      <option value="exact">is exactly</option>
                      <option value="regex">matches the regex</option>
                    </select>
                  </div>`
              : html`<div>
                    <label for="action-selector">CSS selector</label>
                    <input id="action-selector" placeholder="button.signup" value=${form.selector} onInput=${(e) => set({ selector: e.currentTarget.value })} />
                  </div>
                  <div>
                    <label for="action-text">Text</label>
                    <input id="action-text" value=${form.text} onInput=${(e) => set({ text: e.currentTarget.value })} />
                  </div>`
          }
          <div class="submit"><button type="submit">Create action</button></div>
        </div>
      </form>
    <//>
    <${Card} title="Actions" id="action-list">
      <table class="plain" aria-label="Actions">
        <thead><tr><th>Name</th><th>Steps</th></tr></thead>
        <tbody>
          ${(actions ?? []).map((a) => html`<tr><td>${a.name}</td><td>${a.steps.map(describe).join(' or ')}</td></tr>`)}
        </tbody>
      </table>
    <//>`
}

// Dashboards: the project's dashboards (…/dashboards/), one built from saved insights (added through
// the insight's `dashboards`) and text cards, a date filter over every tile (the dashboard's
// `filters`), refresh, and a public link (…/dashboards/{id}/sharing/ → /shared/<token>).
import { useEffect, useState } from 'preact/hooks'
import { html } from '../lib/html.js'
import { projectPath } from '../lib/api.js'
import { go } from '../lib/route.js'
import { Card, ErrorBox } from '../components/ui.js'
import { RANGES } from '../components/insight-form.js'
import { insightTitle, Tiles } from '../components/insight-view.js'

function DashboardList({ api, project }) {
  const [list, setList] = useState(null)
  const [name, setName] = useState('')
  const [error, setError] = useState(null)
  useEffect(() => {
    api
      .get(projectPath(project.id, 'dashboards/?limit=200'))
      .then((r) => setList(r.results))
      .catch(setError)
  }, [project.id])
  const create = async (e) => {
    e.preventDefault()
    try {
      const d = await api.post(projectPath(project.id, 'dashboards/'), {
        name: name.trim() || 'New dashboard',
      })
      go(`dashboards/${d.id}`)
    } catch (err) {
      setError(err)
    }
  }
  return html`<form class="fields" onSubmit=${create} aria-label="Create a dashboard">
      <div>
        <label for="dashboard-name">Dashboard name</label>
        <input id="dashboard-name" value=${name} placeholder="e.g. Morning numbers" onInput=${(e) => setName(e.currentTarget.value)} />
      </div>
      <div class="submit"><button type="submit">Create dashboard</button></div>
    </form>
    <${ErrorBox} error=${error} />
    ${
      list === null
        ? html`<p aria-live="polite">Loading…</p>`
        : html`<ul class="dashboard-list" aria-label="Dashboards">
            ${list.map(
              (d) =>
                html`<li><a href="#/dashboards/${d.id}">${d.name || `Dashboard ${d.id}`}</a>${d.pinned ? ' 📌' : ''}${d.is_shared ? html` <span class="badge">shared</span>` : null}</li>`,
            )}
          </ul>`
    }`
}

function AddInsight({ api, project, dashboard, onChange }) {
  const [saved, setSaved] = useState([])
  const [pick, setPick] = useState('')
  useEffect(() => {
    api
      .get(projectPath(project.id, 'insights/?basic=true&limit=200&order=-last_modified_at'))
      .then((r) => setSaved(r.results))
      .catch(() => {})
  }, [project.id, dashboard.tiles.length])
  const shown = new Set(dashboard.tiles.map((t) => t.insight?.id).filter(Boolean))
  const add = async (e) => {
    e.preventDefault()
    const insight = saved.find((i) => String(i.id) === pick)
    if (!insight) return
    await api.patch(projectPath(project.id, `insights/${insight.id}/`), {
      dashboards: [...insight.dashboards, dashboard.id],
    })
    setPick('')
    onChange()
  }
  return html`<form class="inline" onSubmit=${add} aria-label="Add insight">
    <label for="add-insight">Add a saved insight</label>
    <select id="add-insight" value=${pick} onChange=${(e) => setPick(e.currentTarget.value)}>
      <option value="">Choose…</option>
      ${saved.filter((i) => !shown.has(i.id)).map((i) => html`<option value=${String(i.id)}>${insightTitle(i)}</option>`)}
    </select>
    <button type="submit" class="secondary" disabled=${!pick}>Add</button>
  </form>`
}

function AddText({ api, project, dashboard, onChange }) {
  const [body, setBody] = useState('')
  const add = async (e) => {
    e.preventDefault()
    await api.patch(projectPath(project.id, `dashboards/${dashboard.id}/`), { tiles: [{ text: { body } }] })
    setBody('')
    onChange()
  }
  return html`<form class="inline" onSubmit=${add} aria-label="Add text">
    <label for="add-text">Add a text card</label>
    <input id="add-text" value=${body} placeholder="A note for readers" onInput=${(e) => setBody(e.currentTarget.value)} />
    <button type="submit" class="secondary" disabled=${!body.trim()}>Add text</button>
  </form>`
}

function Share({ api, project, dashboard }) {
  const [sharing, setSharing] = useState(null)
  const path = projectPath(project.id, `dashboards/${dashboard.id}/sharing/`)
  useEffect(() => {
    api
      .get(path)
      .then(setSharing)
      .catch(() => {})
  }, [dashboard.id])
  if (!sharing) return null
  const toggle = async (e) => setSharing(await api.patch(path, { enabled: e.currentTarget.checked }))
  const link = `${location.origin}/shared/${sharing.access_token}`
  return html`<div class="inline share">
    <label><input type="checkbox" checked=${sharing.enabled} onChange=${toggle} /> Share publicly</label>
    ${sharing.enabled ? html`<a id="share-link" href=${link} target="_blank" rel="noopener">${link}</a>` : null}
  </div>`
}

function DashboardView({ api, project, id }) {
  const [dashboard, setDashboard] = useState(null)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState(null)
  const load = async (refresh = 'blocking') => {
    setBusy(true)
    try {
      setDashboard(await api.get(projectPath(project.id, `dashboards/${id}/?refresh=${refresh}`)))
      setError(null)
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  useEffect(() => {
    load()
  }, [id])
  if (!dashboard)
    return html`<${ErrorBox} error=${error} />${error ? null : html`<p aria-live="polite">Loading…</p>`}`
  const dateFrom = dashboard.filters?.date_from ?? ''
  const setRange = async (value) => {
    await api.patch(projectPath(project.id, `dashboards/${id}/`), {
      filters: { ...dashboard.filters, date_from: value || null },
    })
    load()
  }
  const remove = async (tile) => {
    if (tile.insight) {
      const dashboards = tile.insight.dashboards.filter((d) => d !== dashboard.id)
      await api.patch(projectPath(project.id, `insights/${tile.insight.id}/`), { dashboards })
    } else {
      await api.patch(projectPath(project.id, `dashboards/${id}/`), {
        tiles: [{ id: tile.id, deleted: true }],
      })
    }
    load()
  }
  return html`<h2>${dashboard.name || `Dashboard ${dashboard.id}`}</h2>
    <div class="dashboard-bar">
      <div class="inline">
        <label for="dashboard-range">Date range of every tile</label>
        <select id="dashboard-range" value=${dateFrom} onChange=${(e) => setRange(e.currentTarget.value)}>
          <option value="">Each insight's own</option>
          ${RANGES.map(([v, l]) => html`<option value=${v}>${l}</option>`)}
        </select>
      </div>
      <button type="button" onClick=${() => load('force_blocking')} disabled=${busy}>${busy ? 'Refreshing…' : 'Refresh'}</button>
      <${Share} api=${api} project=${project} dashboard=${dashboard} />
    </div>
    <div class="dashboard-bar">
      <${AddInsight} api=${api} project=${project} dashboard=${dashboard} onChange=${() => load()} />
      <${AddText} api=${api} project=${project} dashboard=${dashboard} onChange=${() => load()} />
    </div>
    <${ErrorBox} error=${error} />
    ${dashboard.tiles.length ? html`<${Tiles} tiles=${dashboard.tiles} onRemove=${remove} />` : html`<p>No tiles yet: add a saved insight or a text card.</p>`}`
}

export function DashboardsPage({ api, project, route }) {
  const id = route[0]
  return html`<h1>Dashboards</h1>
    ${id ? html`<p><a href="#/dashboards">← All dashboards</a></p>` : null}
    <${Card}>${id ? html`<${DashboardView} key=${id} api=${api} project=${project} id=${id} />` : html`<${DashboardList} api=${api} project=${project} />`}</${Card}>`
}

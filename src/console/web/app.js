// The console shell: sign-in with a personal API key (kept in sessionStorage, sent only to this
// Burrow's API), the project picker, navigation, and the page of the current route.
import { render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { html } from './lib/html.js'
import { ApiError, createApi } from './lib/api.js'
import { useRoute } from './lib/route.js'
import { ErrorBox } from './components/ui.js'
import { LivePage } from './pages/live.js'
import { ExplorePage } from './pages/explore.js'
import { InsightsPage } from './pages/insights.js'
import { WebAnalyticsPage } from './pages/web-analytics.js'
import { DashboardsPage } from './pages/dashboards.js'
import { PeoplePage } from './pages/people.js'
import { FlagsPage } from './pages/flags.js'
import { ExperimentsPage } from './pages/experiments.js'
import { CohortsPage, ActionsPage } from './pages/definitions.js'
import { ProjectsPage } from './pages/projects.js'

const KEY = 'burrow.personal_api_key'
const PROJECT = 'burrow.project_id'

const PAGES = [
  ['live', 'Live', LivePage],
  ['explore', 'Explore', ExplorePage],
  ['insights', 'Insights', InsightsPage],
  ['web', 'Web analytics', WebAnalyticsPage],
  ['dashboards', 'Dashboards', DashboardsPage],
  ['people', 'People', PeoplePage],
  ['cohorts', 'Cohorts', CohortsPage],
  ['actions', 'Actions', ActionsPage],
  ['flags', 'Flags', FlagsPage],
  ['experiments', 'Experiments', ExperimentsPage],
  ['projects', 'Projects & keys', ProjectsPage],
]

function SignIn({ onSignedIn }) {
  const [key, setKey] = useState('')
  const [error, setError] = useState(null)
  const [busy, setBusy] = useState(false)
  const submit = async (e) => {
    e.preventDefault()
    setBusy(true)
    setError(null)
    try {
      const projects = await createApi(key.trim()).get('/api/projects/?limit=1000')
      onSignedIn(key.trim(), projects.results)
    } catch (err) {
      setError(
        err instanceof ApiError && err.status === 401
          ? 'This personal API key is not valid here.'
          : err instanceof ApiError && err.status === 403
            ? `This key cannot list projects: ${err.detail}`
            : err,
      )
    } finally {
      setBusy(false)
    }
  }
  return html`<main class="signin" id="main">
    <h1><span class="logo" aria-hidden="true"></span> Burrow</h1>
    <form onSubmit=${submit} class="card">
      <label for="key">Personal API key</label>
      <input
        id="key"
        type="password"
        autocomplete="off"
        placeholder="phx_…"
        value=${key}
        onInput=${(e) => setKey(e.currentTarget.value)}
        required
        autofocus
      />
      <p class="hint">
        Printed by <code>npm start</code> on first start and kept in
        <code>.data/local-credentials.json</code>; or create one with <code>npx burrow keys create</code>. It
        stays in this browser tab only.
      </p>
      <${ErrorBox} error=${error} />
      <button type="submit" disabled=${busy || !key.trim()}>${busy ? 'Signing in…' : 'Sign in'}</button>
    </form>
  </main>`
}

function App() {
  const [key, setKey] = useState(() => sessionStorage.getItem(KEY))
  const [projects, setProjects] = useState(null)
  const [projectId, setProjectId] = useState(() => Number(sessionStorage.getItem(PROJECT)) || null)
  const [error, setError] = useState(null)
  const route = useRoute()
  const api = key ? createApi(key) : null

  const reloadProjects = async () => {
    try {
      const list = (await api.get('/api/projects/?limit=1000')).results
      setProjects(list)
      return list
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) signOut()
      else setError(err)
      return []
    }
  }
  useEffect(() => {
    if (key && !projects) reloadProjects()
  }, [key])
  useEffect(() => {
    if (projects && projects.length && !projects.some((p) => p.id === projectId)) choose(projects[0].id)
  }, [projects])

  const choose = (id) => {
    sessionStorage.setItem(PROJECT, String(id))
    setProjectId(id)
  }
  const signOut = () => {
    sessionStorage.removeItem(KEY)
    sessionStorage.removeItem(PROJECT)
    setKey(null)
    setProjects(null)
  }

  const [name] = route
  const page = PAGES.find(([n]) => n === name) ?? PAGES[0]
  useEffect(() => {
    document.title = key ? `${page[1]} · Burrow` : 'Sign in · Burrow'
  }, [page[1], key])

  if (!key) {
    return html`<${SignIn}
      onSignedIn=${(k, list) => {
        sessionStorage.setItem(KEY, k)
        setKey(k)
        setProjects(list)
      }}
    />`
  }
  const Page = page[2]
  const project = projects?.find((p) => p.id === projectId)
  return html`<a
      class="skip"
      href="#main"
      onClick=${(e) => {
        e.preventDefault()
        document.getElementById('main')?.focus()
      }}
      >Skip to content</a
    >
    <header class="top">
      <a class="brand" href="#/live"><span class="logo" aria-hidden="true"></span>Burrow</a>
      <nav aria-label="Pages">
        ${PAGES.map(
          ([n, label]) =>
            html`<a href="#/${n}" aria-current=${n === page[0] ? 'page' : undefined}>${label}</a>`,
        )}
      </nav>
      <div class="who">
        <label for="project">Project</label>
        <select
          id="project"
          value=${projectId ?? ''}
          onChange=${(e) => choose(Number(e.currentTarget.value))}
        >
          ${(projects ?? []).map((p) => html`<option value=${p.id}>${p.name} (#${p.id})</option>`)}
        </select>
        <button type="button" class="secondary small" onClick=${signOut}>Sign out</button>
      </div>
    </header>
    <main id="main" tabindex="-1">
      <${ErrorBox} error=${error} />
      ${
        project
          ? html`<${Page}
              key=${`${page[0]}-${project.id}`}
              api=${api}
              project=${project}
              route=${route.slice(1)}
              projects=${projects}
              reloadProjects=${reloadProjects}
              chooseProject=${choose}
            />`
          : projects
            ? html`<p>No project is reachable with this key.</p>`
            : html`<p aria-live="polite">Loading…</p>`
      }
    </main>`
}

render(html`<${App} />`, document.getElementById('app'))

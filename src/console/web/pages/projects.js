// Projects and keys: the organization's projects with their project API keys (for SDKs), a form to
// create one, and the snippets that point posthog-js / posthog-node at this Burrow.
import { useState } from 'preact/hooks'
import { html } from '../lib/html.js'
import { when } from '../lib/format.js'
import { Card, ErrorBox, Snippet, sdkSnippets } from '../components/ui.js'

/** IANA zones the browser knows, with UTC and the browser's own zone always present. */
const OWN_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC'
const ZONES = zones(OWN_ZONE)

function zones(own) {
  let list = []
  try {
    list = Intl.supportedValuesOf('timeZone')
  } catch {}
  return [...new Set(['UTC', own, ...list])]
}

export function ProjectsPage({ api, project, projects, reloadProjects, chooseProject }) {
  const [name, setName] = useState('')
  const [tz, setTz] = useState(OWN_ZONE)
  const [error, setError] = useState(null)
  const [busy, setBusy] = useState(false)
  const create = async (e) => {
    e.preventDefault()
    setBusy(true)
    setError(null)
    try {
      const created = await api.post('/api/projects/', { name: name.trim(), timezone: tz })
      await reloadProjects()
      chooseProject(created.id)
      setName('')
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  const s = sdkSnippets(project.api_token)
  return html`<h1>Projects & keys</h1>
    <div class="grid2">
      <${Card} title="Projects" id="projects">
        <table class="plain">
          <thead><tr><th scope="col">Project</th><th scope="col">Project API key</th><th scope="col">Time zone</th><th scope="col">Created</th><th scope="col"><span class="sr-only">Select</span></th></tr></thead>
          <tbody>
            ${projects.map(
              (p) =>
                html`<tr class=${p.id === project.id ? 'current' : ''}>
                  <td>${p.name} <span class="muted">#${p.id}</span></td>
                  <td class="mono">${p.api_token}</td>
                  <td>${p.timezone}</td>
                  <td>${when(p.created_at)}</td>
                  <td>
                    ${p.id === project.id ? html`<span class="muted">current</span>` : html`<button type="button" class="secondary small" onClick=${() => chooseProject(p.id)}>Use</button>`}
                  </td>
                </tr>`,
            )}
          </tbody>
        </table>
      </${Card}>
      <${Card} title="Create a project" id="create-project">
        <form onSubmit=${create} class="stack">
          <label for="project-name">Name</label>
          <input id="project-name" value=${name} required maxlength="200" onInput=${(e) => setName(e.currentTarget.value)} />
          <label for="project-tz">Time zone</label>
          <select id="project-tz" value=${tz} onChange=${(e) => setTz(e.currentTarget.value)}>
            ${ZONES.map((z) => html`<option value=${z}>${z}</option>`)}
          </select>
          <${ErrorBox} error=${error} />
          <div><button type="submit" disabled=${busy || !name.trim()}>${busy ? 'Creating…' : 'Create project'}</button></div>
        </form>
      </${Card}>
    </div>
    <${Card} title="Send events to ${project.name}" id="snippets">
      <p>Project API key: <code class="token">${project.api_token}</code> (public: it can only send events and read flags). Management and queries use a personal API key (<code>npx burrow keys create --project ${project.id} --scopes '*'</code>).</p>
      <div class="grid2">
        <${Snippet} label="posthog-js, in your page's <head>" code=${s.js} />
        <div>
          <${Snippet} label="posthog-js, from npm" code=${s.npm} />
          <${Snippet} label="posthog-node" code=${s.node} />
          <${Snippet} label="curl" code=${s.curl} />
        </div>
      </div>
    </${Card}>`
}

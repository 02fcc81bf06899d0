// Saved insights: the project's insights (GET …/insights/?basic=true), searchable, newest change
// first, with the dashboards each is on.
import { useEffect, useState } from 'preact/hooks'
import { html } from '../lib/html.js'
import { projectPath } from '../lib/api.js'
import { ErrorBox } from '../components/ui.js'
import { insightTitle } from '../components/insight-view.js'

export function SavedInsights({ api, project }) {
  const [search, setSearch] = useState('')
  const [list, setList] = useState(null)
  const [error, setError] = useState(null)
  useEffect(() => {
    const ask = new AbortController()
    const t = setTimeout(() => {
      api
        .get(
          projectPath(
            project.id,
            `insights/?basic=true&order=-last_modified_at&limit=200&search=${encodeURIComponent(search)}`,
          ),
          ask.signal,
        )
        .then((r) => {
          setList(r.results)
          setError(null)
        })
        .catch((err) => err.name !== 'AbortError' && setError(err))
    }, 150)
    return () => {
      clearTimeout(t)
      ask.abort()
    }
  }, [project.id, search])
  return html`<div class="fields">
      <div>
        <label for="insight-search">Search saved insights</label>
        <input id="insight-search" type="search" value=${search} onInput=${(e) => setSearch(e.currentTarget.value)} />
      </div>
    </div>
    <${ErrorBox} error=${error} />
    ${
      list === null
        ? html`<p aria-live="polite">Loading…</p>`
        : list.length === 0
          ? html`<p>No saved insight${search ? ' matches' : ' yet: run one above and save it'}.</p>`
          : html`<table class="plain" aria-label="Saved insights">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Kind</th>
                  <th scope="col" class="n">Dashboards</th>
                  <th scope="col">Last changed</th>
                </tr>
              </thead>
              <tbody>
                ${list.map(
                  (i) =>
                    html`<tr>
                      <td>${insightTitle(i)}</td>
                      <td>${i.query?.source?.kind ?? i.query?.kind ?? '—'}</td>
                      <td class="n">${i.dashboards.length}</td>
                      <td>${new Date(i.last_modified_at).toLocaleString()}</td>
                    </tr>`,
                )}
              </tbody>
            </table>`
    }`
}

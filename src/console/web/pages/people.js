// People: search persons (GET …/persons/ with `search` or a property filter) and a person's page
// with properties, distinct ids, session recordings (with a player) and their latest events (an
// EventsQuery with `personId`).
import { useEffect, useState } from 'preact/hooks'
import { html } from '../lib/html.js'
import { projectPath, segment } from '../lib/api.js'
import { cell, num, when } from '../lib/format.js'
import { VirtualTable } from '../components/table.js'
import { Card, ErrorBox } from '../components/ui.js'
import { PersonRecordings } from '../components/recordings.js'
import { NameInput } from '../components/insight-form.js'

function PersonList({ api, project }) {
  const [search, setSearch] = useState('')
  const [propKey, setPropKey] = useState('')
  const [propValue, setPropValue] = useState('')
  const [state, setState] = useState({ busy: false, error: null, data: null })
  const load = async (e) => {
    e?.preventDefault()
    setState((s) => ({ ...s, busy: true, error: null }))
    const params = new URLSearchParams({ limit: '500' })
    if (search.trim()) params.set('search', search.trim())
    if (propKey.trim())
      params.set(
        'properties',
        JSON.stringify([{ key: propKey.trim(), value: propValue, operator: 'exact', type: 'person' }]),
      )
    try {
      setState({
        busy: false,
        error: null,
        data: await api.get(projectPath(project.id, `persons/?${params}`)),
      })
    } catch (error) {
      setState({ busy: false, error, data: null })
    }
  }
  useEffect(() => {
    load()
  }, [project.id])
  const rows = state.data?.results ?? []
  return html`<${Card}>
      <form class="fields" onSubmit=${load} role="search" aria-label="Persons">
        <div><label for="person-search">Distinct id, email or any property text</label><input id="person-search" type="search" value=${search} onInput=${(e) => setSearch(e.currentTarget.value)} /></div>
        <div><${NameInput} api=${api} project=${project} kind="person" id="person-key" label="Person property" value=${propKey} placeholder="e.g. plan" onChange=${setPropKey} /></div>
        <div><label for="person-value">equals</label><input id="person-value" value=${propValue} onInput=${(e) => setPropValue(e.currentTarget.value)} /></div>
        <div class="submit"><button type="submit" disabled=${state.busy}>${state.busy ? 'Searching…' : 'Search'}</button></div>
      </form>
      <${ErrorBox} error=${state.error} />
    </${Card}>
    ${
      state.data
        ? html`<${Card} title="${num(state.data.count)} persons" id="persons">
          ${
            rows.length
              ? html`<ul class="person-list">
                  ${rows.map(
                    (p) =>
                      html`<li>
                        <a href="#/people/${p.uuid}">${p.name}</a>
                        <span class="mono muted"
                          >${p.distinct_ids.slice(0, 3).join(', ')}${p.distinct_ids.length > 3 ? ` +${p.distinct_ids.length - 3}` : ''}</span
                        >
                        <span class="muted">since ${when(p.created_at)}</span>
                      </li>`,
                  )}
                </ul>`
              : html`<p class="muted">No person matches.</p>`
          }
        </${Card}>`
        : null
    }`
}

function PersonPage({ api, project, uuid }) {
  const [person, setPerson] = useState(null)
  const [events, setEvents] = useState(null)
  const [error, setError] = useState(null)
  useEffect(() => {
    api.get(projectPath(project.id, `persons/${segment('uuid', uuid)}/`)).then(setPerson, setError)
    api
      .post(projectPath(project.id, 'query/'), {
        query: {
          kind: 'EventsQuery',
          select: ['timestamp', 'event', 'distinct_id', 'properties.$current_url'],
          personId: uuid,
          after: 'all',
          orderBy: ['timestamp DESC'],
          limit: 500,
        },
      })
      .then(setEvents, setError)
  }, [uuid])
  const props = person ? Object.entries(person.properties).sort(([a], [b]) => a.localeCompare(b)) : []
  return html`<p><a href="#/people">← All persons</a></p>
    <${ErrorBox} error=${error} />
    ${
      person
        ? html`<h2 class="person-name">${person.name}</h2>
          <p class="muted">uuid <span class="mono">${person.uuid}</span> · first seen ${when(person.created_at)} · ${person.is_identified ? 'identified' : 'anonymous'}</p>
          <div class="grid2">
            <${Card} title="Properties" id="person-props">
              <table class="plain props">
                <tbody>${props.map(
                  ([k, v]) =>
                    html`<tr>
                      <th scope="row">${k}</th>
                      <td class="mono">${cell(v)}</td>
                    </tr>`,
                )}</tbody>
              </table>
              ${props.length === 0 ? html`<p class="muted">No properties.</p>` : null}
            </${Card}>
            <${Card} title="Distinct ids" id="person-ids">
              <ul class="mono">${person.distinct_ids.map((d) => html`<li>${d}</li>`)}</ul>
            </${Card}>
          </div>`
        : html`<p aria-live="polite">Loading…</p>`
    }
    <${PersonRecordings} api=${api} project=${project} uuid=${uuid} />
    ${
      events
        ? html`<${Card} title="Events (${num(events.results.length)}${events.hasMore ? '+' : ''})" id="timeline">
          <${VirtualTable}
            label="Event timeline"
            columns=${['time', 'event', 'distinct id', 'url']}
            rows=${events.results.map((r) => [when(r[0]), r[1], r[2], r[3]])}
          />
        </${Card}>`
        : null
    }`
}

export function PeoplePage({ api, project, route }) {
  return html`<h1>People</h1>
    ${route[0] ? html`<${PersonPage} api=${api} project=${project} uuid=${route[0]} />` : html`<${PersonList} api=${api} project=${project} />`}`
}

// A shared dashboard or insight (/shared/<token>): read-only, without a key. Everything comes from
// `<this page's URL>.json`, which answers only while the link is shared.
import { render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { html } from './lib/html.js'
import { InsightView, insightTitle, Tiles } from './components/insight-view.js'

function Shared() {
  const [data, setData] = useState(null)
  const [gone, setGone] = useState(false)
  useEffect(() => {
    fetch(`${location.pathname.replace(/\/$/, '')}.json`)
      .then((r) => (r.ok ? r.json() : Promise.reject(new Error(String(r.status)))))
      .then(setData)
      .catch(() => setGone(true))
  }, [])
  if (gone) return html`<main class="shared" id="main"><h1>This link is not shared (any more).</h1></main>`
  if (!data) return html`<main class="shared" id="main"><p aria-live="polite">Loading…</p></main>`
  if (data.dashboard) {
    const d = data.dashboard
    document.title = `${d.name || 'Dashboard'} · Burrow`
    return html`<main class="shared" id="main">
      <h1>${d.name || `Dashboard ${d.id}`}</h1>
      ${d.description ? html`<p>${d.description}</p>` : null}
      <${Tiles} tiles=${d.tiles} />
    </main>`
  }
  const i = data.insight
  document.title = `${insightTitle(i)} · Burrow`
  return html`<main class="shared" id="main"><h1>${insightTitle(i)}</h1><${InsightView} insight=${i} height=${320} /></main>`
}

render(html`<${Shared} />`, document.getElementById('app'))

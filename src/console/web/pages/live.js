// Live: events per second captured and projected, the projectors' progress on this project, dead
// letters, ClickHouse/NATS health, and a tail of arriving events. One server-sent event stream
// (GET …/live/events/) brings a stats snapshot every second and the tail in batches every 250 ms;
// the page redraws at most once per animation frame however fast events arrive.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { html } from '../lib/html.js'
import { projectPath } from '../lib/api.js'
import { clock, num, when } from '../lib/format.js'
import { TimeChart } from '../components/time-chart.js'
import { Card, ErrorBox, Snippet, sdkSnippets } from '../components/ui.js'

const MAX_ROWS = 300

function useHealth() {
  const [health, setHealth] = useState(null)
  useEffect(() => {
    let stop = false
    const poll = async () => {
      try {
        const res = await fetch('/_health')
        setHealth(await res.json())
      } catch {
        setHealth({ status: 'unreachable', dependencies: {} })
      }
      if (!stop) timer = setTimeout(poll, 5000)
    }
    let timer = setTimeout(poll, 0)
    return () => {
      stop = true
      clearTimeout(timer)
    }
  }, [])
  return health
}

function Stat({ label, value, note, tone }) {
  return html`<div class="stat ${tone ?? ''}">
    <div class="stat-label">${label}</div>
    <div class="stat-value">${value}</div>
    ${note ? html`<div class="stat-note">${note}</div>` : null}
  </div>`
}

function dependency(health, name) {
  const d = health?.dependencies?.[name]
  if (!health) return ['…', '']
  if (!d) return ['unknown', 'warn']
  return d.status === 'ok' ? ['up', 'ok'] : ['down', 'bad']
}

export function FirstEvent({ project }) {
  const s = sdkSnippets(project.api_token)
  const [tab, setTab] = useState('node')
  const tabs = [
    ['node', 'posthog-node', s.node],
    ['html', 'posthog-js (HTML)', s.js],
    ['npm', 'posthog-js (npm)', s.npm],
    ['curl', 'curl', s.curl],
  ]
  const current = tabs.find((t) => t[0] === tab)
  return html`<${Card} title="Waiting for the first event" id="first-event">
    <p>Send an event with this project's API key <code>${project.api_token}</code>; it appears below as soon as it is in the log.</p>
    <div role="tablist" aria-label="Snippets" class="tabs">
      ${tabs.map(
        ([id, label]) =>
          html`<button
            type="button"
            role="tab"
            aria-selected=${tab === id}
            class=${tab === id ? 'active' : ''}
            onClick=${() => setTab(id)}
          >
            ${label}
          </button>`,
      )}
    </div>
    <${Snippet} label=${current[1]} code=${current[2]} />
  </${Card}>`
}

export function LivePage({ api, project }) {
  const health = useHealth()
  const [stats, setStats] = useState(null)
  const [events, setEvents] = useState([])
  const [paused, setPaused] = useState(false)
  const [held, setHeld] = useState(0)
  const [skipped, setSkipped] = useState(0)
  const [filter, setFilter] = useState({ event: '', distinct_id: '' })
  const [applied, setApplied] = useState(filter)
  const [conn, setConn] = useState({ state: 'connecting' })
  const pending = useRef([])
  const heldRows = useRef([])
  const pausedRef = useRef(false)
  pausedRef.current = paused

  useEffect(() => {
    const t = setTimeout(() => setApplied(filter), 300)
    return () => clearTimeout(t)
  }, [filter.event, filter.distinct_id])

  // A new filter applies to the rows already listed too (the stream applies it to new ones).
  useEffect(() => {
    const keep = (e) =>
      e.event.toLowerCase().includes(applied.event.toLowerCase()) &&
      e.distinct_id.toLowerCase().includes(applied.distinct_id.toLowerCase())
    setEvents((prev) => prev.filter(keep))
    heldRows.current = heldRows.current.filter(keep)
  }, [applied.event, applied.distinct_id])

  useEffect(() => {
    const ctl = new AbortController()
    let frame = 0
    let skippedSince = 0
    const flush = () => {
      frame = 0
      const batch = pending.current.reverse()
      pending.current = []
      if (skippedSince) setSkipped((n) => n + skippedSince)
      skippedSince = 0
      if (pausedRef.current) {
        heldRows.current = [...batch, ...heldRows.current].slice(0, MAX_ROWS)
        setHeld((n) => n + batch.length)
      } else if (batch.length) setEvents((prev) => [...batch, ...prev].slice(0, MAX_ROWS))
    }
    const params = new URLSearchParams()
    if (applied.event) params.set('event', applied.event)
    if (applied.distinct_id) params.set('distinct_id', applied.distinct_id)
    const path = projectPath(project.id, `live/events/?${params}`)
    const connect = async () => {
      while (!ctl.signal.aborted) {
        try {
          setConn({ state: 'live' })
          await api.stream(
            path,
            (name, data) => {
              if (name === 'stats') setStats(data)
              else if (name === 'events') {
                for (const e of data.events) pending.current.push(e)
                // Bounded between frames too: a hidden tab gets no frames.
                if (pending.current.length > MAX_ROWS * 2) {
                  skippedSince += pending.current.length - MAX_ROWS
                  pending.current = pending.current.slice(-MAX_ROWS)
                }
                skippedSince += data.skipped
                if (!frame) frame = requestAnimationFrame(flush)
              }
            },
            ctl.signal,
          )
        } catch (err) {
          if (ctl.signal.aborted) return
          setConn({ state: 'error', error: err })
          if (err?.status === 401 || err?.status === 403) return
        }
        if (ctl.signal.aborted) return
        setConn((c) => (c.state === 'error' ? c : { state: 'reconnecting' }))
        await new Promise((r) => setTimeout(r, 2000))
      }
    }
    connect()
    return () => {
      ctl.abort()
      cancelAnimationFrame(frame)
    }
  }, [applied.event, applied.distinct_id, project.id])

  const resume = () => {
    setEvents((prev) => [...heldRows.current, ...prev].slice(0, MAX_ROWS))
    heldRows.current = []
    setHeld(0)
    setPaused(false)
  }

  const chart = useMemo(() => {
    if (!stats) return null
    // The current second is still filling: leave it out so the line does not dip at the edge.
    const n = stats.series.captured.length - 1
    const x = Array.from({ length: n }, (_, i) => stats.series.start + i)
    return {
      x,
      series: [
        { label: 'captured / s', values: stats.series.captured.slice(0, n) },
        { label: 'projected / s', values: stats.series.projected.slice(0, n), dash: [6, 4] },
      ],
    }
  }, [stats])

  const last = (arr) => (arr && arr.length > 1 ? arr[arr.length - 2] : 0)
  const waiting = stats ? stats.subjects.reduce((s, x) => s + x.unprojected_events, 0) : 0
  const [ch, chTone] = dependency(health, 'clickhouse')
  const [nats, natsTone] = dependency(health, 'nats')
  const empty =
    stats && stats.totals.captured === 0 && events.length === 0 && !applied.event && !applied.distinct_id

  return html`<h1>Live <span class="conn ${conn.state}" aria-live="polite">${conn.state === 'live' ? '● live' : conn.state}</span></h1>
    ${conn.state === 'error' ? html`<${ErrorBox} error=${conn.error} />` : null}
    <div class="stats" aria-live="off">
      <${Stat} label="Captured / s" value=${stats ? num(last(stats.series.captured)) : '…'} note="last full second" />
      <${Stat} label="Projected / s" value=${stats ? num(last(stats.series.projected)) : '…'} note="written to ClickHouse" />
      <${Stat}
        label="Captured"
        value=${stats ? num(stats.totals.captured) : '…'}
        note=${stats ? `since ${clock(Date.parse(stats.watching_since) - stats.window_seconds * 1000)}` : ''}
      />
      <${Stat} label="Waiting to be projected" value=${stats ? num(waiting) : '…'} tone=${waiting > 0 ? 'warn' : ''} />
      <${Stat} label="Dead letters" value=${stats ? num(stats.dead_letters.count) : '…'} tone=${stats?.dead_letters.count ? 'bad' : ''} />
      <${Stat} label="ClickHouse" value=${ch} tone=${chTone} />
      <${Stat} label="NATS" value=${nats} tone=${natsTone} />
    </div>
    ${empty ? html`<${FirstEvent} project=${project} />` : null}
    <${Card} title="Events per second" id="rate">
      ${
        chart
          ? html`<${TimeChart}
              x=${chart.x}
              series=${chart.series}
              height=${220}
              label="Events per second captured and projected over the last two minutes"
            />`
          : html`<p>Connecting…</p>`
      }
    </${Card}>
    <div class="grid2">
      <${Card} title="Projector lag" id="lag">
        <table class="plain">
          <caption>This project's events not yet in ClickHouse, by lane and partition</caption>
          <thead><tr><th scope="col">Lane</th><th scope="col">Partition</th><th scope="col" class="n">Waiting events</th></tr></thead>
          <tbody>
            ${(stats?.subjects ?? []).map(
              (s) =>
                html`<tr>
                  <td>${s.lane}</td>
                  <td>${s.partition}</td>
                  <td class="n">${num(s.unprojected_events)}</td>
                </tr>`,
            )}
            ${
              stats && !stats.subjects.length
                ? html`<tr>
                    <td colspan="3" class="muted">No events in the last two minutes.</td>
                  </tr>`
                : null
            }
          </tbody>
        </table>
      </${Card}>
      <${Card} title="Dead letters" id="dlq">
        ${
          stats && stats.dead_letters.count === 0
            ? html`<p class="muted">None: every event of this project was projected.</p>`
            : html`<table class="plain">
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">Reason</th>
                    <th scope="col">Event</th>
                    <th scope="col">Log seq</th>
                  </tr>
                </thead>
                <tbody>
                  ${(stats?.dead_letters.recent ?? []).map(
                    (d) =>
                      html`<tr>
                        <td>${when(d.at)}</td>
                        <td>${d.reason}</td>
                        <td>${d.event ?? 'whole message'}</td>
                        <td>${d.source_seq ?? ''}${d.offset !== null ? ` #${d.offset}` : ''}</td>
                      </tr>`,
                  )}
                </tbody>
              </table>`
        }
      </${Card}>
    </div>
    <${Card}
      title="Live tail"
      id="tail"
      actions=${html`<div class="tail-controls">
        <label
          >Event
          <input
            type="search"
            value=${filter.event}
            placeholder="any"
            onInput=${(e) => setFilter({ ...filter, event: e.currentTarget.value })}
        /></label>
        <label
          >Distinct id
          <input
            type="search"
            value=${filter.distinct_id}
            placeholder="any"
            onInput=${(e) => setFilter({ ...filter, distinct_id: e.currentTarget.value })}
        /></label>
        <button type="button" aria-pressed=${paused} onClick=${() => (paused ? resume() : setPaused(true))}>
          ${paused ? `Resume${held ? ` (${num(held)} new)` : ''}` : 'Pause'}
        </button>
        <button type="button" class="secondary" onClick=${() => setEvents([])}>Clear</button>
      </div>`}
    >
      ${skipped ? html`<p class="muted">${num(skipped)} events arrived faster than the tail shows them (counted above, not listed).</p>` : null}
      <div class="tail" role="log" aria-label="Incoming events" aria-live="off">
        <table class="plain">
          <thead><tr><th scope="col">Time</th><th scope="col">Event</th><th scope="col">Distinct id</th><th scope="col">Lane</th><th scope="col">Properties</th></tr></thead>
          <tbody>
            ${events.map(
              (e) =>
                html`<tr key=${e.uuid}>
                  <td class="mono">${clock(e.timestamp)}</td>
                  <td><strong>${e.event}</strong></td>
                  <td class="mono">${e.distinct_id}</td>
                  <td>${e.lane}</td>
                  <td>
                    <details>
                      <summary>
                        ${Object.keys(e.properties).length} properties${e.truncated ? ' (cut)' : ''}
                      </summary>
                      <pre>${JSON.stringify(e.properties, null, 2)}</pre>
                    </details>
                  </td>
                </tr>`,
            )}
          </tbody>
        </table>
        ${events.length === 0 ? html`<p class="muted">${applied.event || applied.distinct_id ? 'No matching event yet.' : 'No event yet.'}</p>` : null}
      </div>
    </${Card}>`
}

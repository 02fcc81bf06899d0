// A person's session recordings (GET …/session_recordings/?person_uuid=…) and a player for one of
// them: rrweb-player, loaded only when a recording is played (it is the console's largest module).
import { useEffect, useRef, useState } from 'preact/hooks'
import { html } from '../lib/html.js'
import { projectPath } from '../lib/api.js'
import { loadSnapshots } from '../lib/snapshots.js'
import { num, when } from '../lib/format.js'
import { Card, ErrorBox } from './ui.js'

/** 75 → "1:15", 3700 → "1:01:40". */
export function duration(seconds) {
  const s = Math.max(0, Math.round(seconds))
  const hh = Math.floor(s / 3600)
  const mm = Math.floor((s % 3600) / 60)
  const ss = String(s % 60).padStart(2, '0')
  return hh ? `${hh}:${String(mm).padStart(2, '0')}:${ss}` : `${mm}:${ss}`
}

const count = (n, word) => `${num(n)} ${word}${n === 1 ? '' : 's'}`

function Player({ api, project, recording }) {
  const target = useRef(null)
  const [state, setState] = useState({ busy: true, error: null })
  useEffect(() => {
    const abort = new AbortController()
    let player = null
    setState({ busy: true, error: null })
    Promise.all([loadSnapshots(api, project.id, recording.id, abort.signal), import('rrweb-player')])
      .then(([events, { default: RrwebPlayer }]) => {
        if (abort.signal.aborted) return
        // The replayer needs a full snapshot and something after it to have a timeline.
        if (events.length < 2) throw new Error('This recording has too few snapshots to play.')
        const width = Math.min(960, target.current.clientWidth || 960)
        player = new RrwebPlayer({
          target: target.current,
          props: { events, width, height: Math.round((width * 9) / 16), autoPlay: true, skipInactive: true },
        })
        setState({ busy: false, error: null })
      })
      .catch((error) => {
        if (!abort.signal.aborted) setState({ busy: false, error })
      })
    return () => {
      abort.abort()
      player?.$destroy()
      if (target.current) target.current.textContent = ''
    }
  }, [recording.id])
  return html`<div class="recording-player" role="region" aria-label="Recording ${recording.id}">
    ${state.busy ? html`<p aria-live="polite">Loading the recording…</p>` : null}
    <${ErrorBox} error=${state.error} />
    <div ref=${target}></div>
  </div>`
}

export function PersonRecordings({ api, project, uuid }) {
  const [list, setList] = useState(null)
  const [error, setError] = useState(null)
  const [playing, setPlaying] = useState(null)
  useEffect(() => {
    setList(null)
    setPlaying(null)
    const params = new URLSearchParams({ person_uuid: uuid, limit: '100' })
    api.get(projectPath(project.id, `session_recordings/?${params}`)).then(setList, setError)
  }, [uuid])
  const rows = list?.results ?? []
  return html`<${Card} title="Recordings${list ? ` (${num(rows.length)}${list.has_next ? '+' : ''})` : ''}" id="recordings">
    <${ErrorBox} error=${error} />
    ${list && rows.length === 0 ? html`<p class="muted">No session recordings for this person.</p>` : null}
    ${
      rows.length
        ? html`<ul class="recording-list" aria-label="Session recordings">
            ${rows.map(
              (r) =>
                html`<li>
                  <button
                    type="button"
                    class="small"
                    aria-pressed=${playing?.id === r.id}
                    aria-label="Play recording from ${when(r.start_time)}, ${duration(r.recording_duration)} long"
                    onClick=${() => setPlaying(r)}
                  >
                    Play
                  </button>
                  <span>${when(r.start_time)}</span>
                  <span class="mono" title="duration">${duration(r.recording_duration)}</span>
                  <span class="muted">${count(r.click_count, 'click')} · ${count(r.keypress_count, 'key')}${r.start_url ? ` · ${r.start_url}` : ''}</span>
                </li>`,
            )}
          </ul>`
        : null
    }
    ${playing ? html`<${Player} key=${playing.id} api=${api} project=${project} recording=${playing} />` : null}
  </${Card}>`
}

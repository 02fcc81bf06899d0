// Experiments: create one from a multivariate flag (or with a new control/test flag), launch, stop,
// and read the result of each metric per variant with its interval drawn (docs/experiments.md).
import { useEffect, useState } from 'preact/hooks'
import { html } from '../lib/html.js'
import { projectPath } from '../lib/api.js'
import { num, pct, when } from '../lib/format.js'
import { go } from '../lib/route.js'
import { Card, ErrorBox } from '../components/ui.js'

const eligible = (f) => {
  const v = f.filters?.multivariate?.variants ?? []
  return !f.deleted && v.length > 1 && v[0].key === 'control'
}

const funnelMetric = (event) => ({
  kind: 'ExperimentMetric',
  metric_type: 'funnel',
  name: `Converted: ${event}`,
  series: [{ kind: 'EventsNode', event }],
})

function NewExperiment({ api, project, onCreated }) {
  const [flags, setFlags] = useState([])
  const [form, setForm] = useState({ name: '', flag: '', key: '', event: '' })
  const [error, setError] = useState(null)
  useEffect(() => {
    api
      .get(projectPath(project.id, 'feature_flags/?limit=500'))
      .then((r) => setFlags(r.results.filter(eligible)), setError)
  }, [project.id])
  const set = (patch) => setForm({ ...form, ...patch })
  const submit = async (e) => {
    e.preventDefault()
    setError(null)
    try {
      const created = await api.post(projectPath(project.id, 'experiments/'), {
        name: form.name,
        feature_flag_key: form.flag || form.key,
        metrics: form.event ? [funnelMetric(form.event)] : [],
      })
      onCreated(created)
    } catch (err) {
      setError(err)
    }
  }
  return html`<${Card} title="New experiment" id="new-experiment">
    <form onSubmit=${submit} class="stack">
      <label for="exp-name">Name</label>
      <input id="exp-name" value=${form.name} required onInput=${(e) => set({ name: e.currentTarget.value })} />
      <label for="exp-flag">Feature flag</label>
      <select id="exp-flag" value=${form.flag} onChange=${(e) => set({ flag: e.currentTarget.value })}>
        <option value="">A new flag (control / test, 50% each)</option>
        ${flags.map((f) => html`<option value=${f.key}>${f.key} (${f.filters.multivariate.variants.map((v) => v.key).join(', ')})</option>`)}
      </select>
      ${
        form.flag
          ? null
          : html`<label for="exp-key">New flag key</label>
              <input id="exp-key" class="mono" value=${form.key} required pattern="[a-zA-Z0-9_\\-]+" onInput=${(e) => set({ key: e.currentTarget.value })} />`
      }
      <label for="exp-event">Conversion event (a funnel metric from the exposure)</label>
      <input id="exp-event" class="mono" value=${form.event} placeholder="purchase" onInput=${(e) => set({ event: e.currentTarget.value })} />
      <${ErrorBox} error=${error} />
      <div class="row"><button type="submit">Create experiment</button></div>
    </form>
  </${Card}>`
}

function ExperimentList({ api, project }) {
  const [list, setList] = useState(null)
  const [error, setError] = useState(null)
  useEffect(() => {
    api.get(projectPath(project.id, 'experiments/?limit=500')).then((r) => setList(r.results), setError)
  }, [project.id])
  return html`<div class="grid2">
    <${Card} title="Experiments" id="experiments">
      <${ErrorBox} error=${error} />
      ${list && list.length === 0 ? html`<p class="muted">No experiments yet.</p>` : null}
      ${
        list?.length
          ? html`<table class="plain">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Flag</th>
                  <th scope="col">Status</th>
                  <th scope="col">Started</th>
                </tr>
              </thead>
              <tbody>
                ${list.map(
                  (e) => html`<tr>
                    <td><a href="#/experiments/${e.id}">${e.name}</a></td>
                    <td class="mono">${e.feature_flag_key}</td>
                    <td>${e.status}</td>
                    <td>${e.start_date ? when(e.start_date) : '–'}</td>
                  </tr>`,
                )}
              </tbody>
            </table>`
          : null
      }
    </${Card}>
    <${NewExperiment} api=${api} project=${project} onCreated=${(e) => go(`experiments/${e.id}`)} />
  </div>`
}

/** Each test variant's interval of the relative effect against control, on one axis with zero marked. */
function IntervalChart({ variants, label }) {
  const rows = variants.filter((v) => Array.isArray(v.interval))
  if (!rows.length) return null
  const lo = Math.min(0, ...rows.map((v) => v.interval[0]))
  const hi = Math.max(0, ...rows.map((v) => v.interval[1]))
  const span = hi - lo || 1
  const W = 560
  const left = 110
  const x = (v) => left + ((v - lo) / span) * (W - left - 20)
  const H = 26 * rows.length + 30
  return html`<figure class="interval-chart">
    <svg viewBox="0 0 ${W} ${H}" width="100%" role="img" aria-label=${label}>
      <line x1=${x(0)} x2=${x(0)} y1="4" y2=${H - 22} stroke="#6b7280" stroke-dasharray="3 3" />
      ${rows.map((v, i) => {
        const y = 18 + i * 26
        const good = v.interval[0] > 0
        const bad = v.interval[1] < 0
        const color = good ? '#166534' : bad ? '#b91c1c' : '#1d4ed8'
        return html`<g>
          <text x="0" y=${y + 4} font-size="12">${v.key}</text>
          <rect x=${x(v.interval[0])} y=${y - 6} width=${Math.max(2, x(v.interval[1]) - x(v.interval[0]))} height="12" rx="3" fill=${color} opacity="0.35" />
          <line x1=${x(v.effect)} x2=${x(v.effect)} y1=${y - 8} y2=${y + 8} stroke=${color} stroke-width="2" />
        </g>`
      })}
      ${x(0) - x(lo) > 40 ? html`<text x=${x(lo)} y=${H - 6} font-size="11" fill="#4b5563">${pct(lo)}</text>` : null}
      <text x=${x(0)} y=${H - 6} font-size="11" fill="#4b5563" text-anchor="middle">0%</text>
      ${x(hi) - x(0) > 40 ? html`<text x=${x(hi)} y=${H - 6} font-size="11" fill="#4b5563" text-anchor="end">${pct(hi)}</text>` : null}
    </svg>
    <figcaption class="muted">${label}</figcaption>
  </figure>`
}

function MetricResult({ api, project, experiment, metric, index, refresh }) {
  const [result, setResult] = useState(null)
  const [error, setError] = useState(null)
  useEffect(() => {
    setError(null)
    // Only the newest request's answer is shown: an earlier one (made at launch, while events were
    // still arriving) can come back after a refresh's and would put its older counts back.
    let newest = true
    api
      .post(projectPath(project.id, 'query/'), {
        query: { kind: 'ExperimentQuery', experiment_id: experiment.id, metric },
        refresh: 'force_blocking',
      })
      .then(
        (r) => newest && setResult(r),
        (e) => newest && setError(e),
      )
    return () => {
      newest = false
    }
  }, [experiment.id, experiment.start_date, experiment.end_date, refresh])
  const title =
    metric.name ||
    (metric.metric_type === 'funnel'
      ? `Converted: ${metric.series.map((s) => s.event).join(' → ')}`
      : metric.metric_type)
  if (error)
    return html`<${Card} title=${title} id=${`metric-${index}`}><${ErrorBox} error=${error} /></${Card}>`
  if (!result)
    return html`<${Card} title=${title} id=${`metric-${index}`}><p aria-live="polite">Loading…</p></${Card}>`
  const frequentist = result.stats_method === 'frequentist'
  const rate = (v) => (v.number_of_samples ? v.sum / v.number_of_samples : NaN)
  const control = result.baseline
  const rows = [control, ...result.variant_results]
  const funnel = metric.metric_type === 'funnel'
  const interval = (v) => (frequentist ? v.confidence_interval : v.credible_interval)
  const chart = result.variant_results.map((v) => ({
    key: v.key,
    interval: interval(v),
    effect: rate(control) ? (rate(v) - rate(control)) / rate(control) : 0,
  }))
  return html`<${Card} title=${title} id=${`metric-${index}`}>
    <table class="plain results">
      <thead>
        <tr>
          <th scope="col">Variant</th>
          <th scope="col" class="n">Exposed</th>
          <th scope="col" class="n">${funnel ? 'Converted' : 'Total'}</th>
          <th scope="col" class="n">${funnel ? 'Rate' : 'Mean'}</th>
          <th scope="col" class="n">${frequentist ? 'p-value' : 'Chance to win'}</th>
          <th scope="col">${frequentist ? 'Confidence' : 'Credible'} interval (95%)</th>
        </tr>
      </thead>
      <tbody>
        ${rows.map((v, i) => {
          const stat = frequentist ? v.p_value : v.chance_to_win
          const ci = interval(v)
          return html`<tr>
            <td class="mono">${v.key}</td>
            <td class="n">${num(v.number_of_samples)}</td>
            <td class="n">${num(v.sum)}</td>
            <td class="n">${funnel ? pct(rate(v)) : num(Math.round(rate(v) * 100) / 100)}</td>
            <td class="n">${i === 0 ? 'baseline' : stat == null ? '–' : frequentist ? stat.toFixed(4) : pct(stat)}</td>
            <td>${i === 0 ? '' : ci ? `${pct(ci[0])} to ${pct(ci[1])}` : (v.validation_failures ?? []).join(', ') || '–'}</td>
          </tr>`
        })}
      </tbody>
    </table>
    ${control.validation_failures?.length ? html`<p class="muted">Not enough data yet: ${control.validation_failures.join(', ')}.</p>` : null}
    <${IntervalChart} variants=${chart} label="Relative effect on ${funnel ? 'conversion' : 'the mean'} against control, with its 95% interval" />
    <p class="muted">
      ${`${result.significant ? 'Significant.' : 'Not significant yet.'} Recommended sample size for a ${result.sample_size.minimum_detectable_effect}% effect: ${result.sample_size.recommended_sample_size == null ? '–' : num(result.sample_size.recommended_sample_size)} (${num(result.sample_size.current_exposures)} exposed so far).`}
    </p>
  </${Card}>`
}

function ExperimentView({ api, project, id }) {
  const [e, setE] = useState(null)
  const [error, setError] = useState(null)
  const [refresh, setRefresh] = useState(0)
  useEffect(() => {
    api.get(projectPath(project.id, `experiments/${id}/`)).then(setE, setError)
  }, [id])
  const act = async (what) => {
    setError(null)
    try {
      setE(
        what === 'archive'
          ? await api.patch(projectPath(project.id, `experiments/${id}/`), { archived: !e.archived })
          : await api.post(projectPath(project.id, `experiments/${id}/${what}/`)),
      )
    } catch (err) {
      setError(err)
    }
  }
  if (!e) return html`<${ErrorBox} error=${error} /><p aria-live="polite">Loading…</p>`
  const metrics = [...(e.metrics ?? []), ...(e.metrics_secondary ?? [])]
  return html`<p><a href="#/experiments">← All experiments</a></p>
    <${Card}
      title=${e.name}
      id="experiment"
      actions=${html`<div class="row">
        ${e.status === 'draft' ? html`<button type="button" onClick=${() => act('launch')}>Launch</button>` : null}
        ${e.status === 'running' ? html`<button type="button" onClick=${() => act('end')}>Stop</button>` : null}
        ${e.status !== 'draft' ? html`<button type="button" class="secondary" onClick=${() => setRefresh(refresh + 1)}>Refresh results</button>` : null}
        <button type="button" class="secondary" onClick=${() => act('archive')}>${e.archived ? 'Unarchive' : 'Archive'}</button>
      </div>`}
    >
      <p>
        ${'Status '}<strong class="status">${e.status}</strong>${e.archived ? ' (archived)' : ''}${' · flag '}<a
          class="mono"
          href="#/flags/${e.feature_flag?.id}"
          >${e.feature_flag_key}</a
        >${` (${(e.feature_flag?.filters?.multivariate?.variants ?? []).map((v) => `${v.key} ${v.rollout_percentage}%`).join(', ')})`}
      </p>
      <p class="muted">
        ${e.start_date ? `Started ${when(e.start_date)}` : 'Not launched: the flag is off until launch.'}
        ${e.end_date ? ` · stopped ${when(e.end_date)}` : ''}
      </p>
      <${ErrorBox} error=${error} />
    </${Card}>
    ${
      e.status === 'draft'
        ? null
        : metrics.length
          ? metrics.map(
              (m, i) =>
                html`<${MetricResult} key=${i} api=${api} project=${project} experiment=${e} metric=${m} index=${i} refresh=${refresh} />`,
            )
          : html`<p class="muted">This experiment has no metrics.</p>`
    }`
}

export function ExperimentsPage({ api, project, route }) {
  return html`<h1>Experiments</h1>
    ${route[0] ? html`<${ExperimentView} key=${route[0]} api=${api} project=${project} id=${route[0]} />` : html`<${ExperimentList} api=${api} project=${project} />`}`
}

// Insights about persons over time: the retention triangle and lifecycle's stacked bars.
import { useState } from 'preact/hooks'
import { html } from '../lib/html.js'
import { num, pct } from '../lib/format.js'
import { BarChart } from '../components/bar-chart.js'
import { ErrorBox } from '../components/ui.js'
import {
  CohortSelect,
  EventInput,
  RangeSelect,
  SaveInsight,
  cohortFilter,
  retentionEntity,
  seriesNode,
  useRun,
} from '../components/insight-form.js'

export function Retention({ api, project, defs }) {
  const [cohort, setCohort] = useState('')
  const [target, setTarget] = useState('$pageview')
  const [returning, setReturning] = useState('$pageview')
  const [period, setPeriod] = useState('Day')
  const [intervals, setIntervals] = useState(8)
  const [state, run] = useRun(api, project)
  const submit = (e) => {
    e.preventDefault()
    run({
      kind: 'RetentionQuery',
      retentionFilter: {
        period,
        totalIntervals: Number(intervals),
        targetEntity: retentionEntity(target, defs),
        returningEntity: retentionEntity(returning || target, defs),
      },
      ...cohortFilter(cohort),
    })
  }
  const cohorts = state.result?.results ?? []
  const width = cohorts[0]?.values.length ?? 0
  return html`<form class="builder" onSubmit=${submit} aria-label="Retention">
      <div class="fields">
        <div><${CohortSelect} id="ret-cohort" defs=${defs} value=${cohort} onChange=${setCohort} /></div>
        <div>
          <${EventInput} api=${api} project=${project} defs=${defs} id="ret-target" label="Cohort: first did" value=${target} onChange=${setTarget} />
        </div>
        <div>
          <${EventInput} api=${api} project=${project} defs=${defs}
            id="ret-returning"
            label="Came back to do"
            value=${returning}
            onChange=${setReturning}
          />
        </div>
        <div>
          <label for="ret-period">Period</label
          ><select id="ret-period" value=${period} onChange=${(e) => setPeriod(e.currentTarget.value)}>
            ${['Hour', 'Day', 'Week', 'Month'].map((p) => html`<option value=${p}>${p}</option>`)}
          </select>
        </div>
        <div>
          <label for="ret-n">Periods</label
          ><input
            id="ret-n"
            type="number"
            min="2"
            max="30"
            value=${intervals}
            onInput=${(e) => setIntervals(e.currentTarget.value)}
          />
        </div>
        <div class="submit">
          <button type="submit" disabled=${state.busy}>
            ${state.busy ? 'Calculating…' : 'Show retention'}
          </button>
        </div>
      </div>
    </form>
    <${ErrorBox} error=${state.error} />
    <${SaveInsight} api=${api} project=${project} query=${state.query} />
    ${
      cohorts.length
        ? html`<div class="scroll-x">
            <table class="retention">
              <caption>
                Share of each cohort that came back, by ${period.toLowerCase()}s since joining
              </caption>
              <thead>
                <tr>
                  <th scope="col">Cohort</th>
                  <th scope="col" class="n">Persons</th>
                  ${Array.from({ length: width }, (_, k) => html`<th scope="col">${period} ${k}</th>`)}
                </tr>
              </thead>
              <tbody>
                ${cohorts.map((c) => {
                  const size = c.values[0]?.count ?? 0
                  return html`<tr>
                    <th scope="row">
                      ${c.label}${c.date ? html` <small>${String(c.date).slice(0, 10)}</small>` : null}
                    </th>
                    <td class="n">${num(size)}</td>
                    ${Array.from({ length: width }, (_, k) => {
                      const v = c.values[k]
                      if (!v) return html`<td class="empty"></td>`
                      const share = size ? v.count / size : 0
                      return html`<td
                        class="cell"
                        style="background:rgba(37,99,235,${(0.08 + share * 0.85).toFixed(2)});color:${share > 0.45 ? '#fff' : '#111827'}"
                        title="${num(v.count)} of ${num(size)}"
                      >
                        ${pct(share)}
                      </td>`
                    })}
                  </tr>`
                })}
              </tbody>
            </table>
          </div>`
        : null
    }`
}

const LIFECYCLE_COLORS = { new: '#16a34a', returning: '#2563eb', resurrecting: '#9333ea', dormant: '#dc2626' }

export function Lifecycle({ api, project, defs }) {
  const [cohort, setCohort] = useState('')
  const [event, setEvent] = useState('$pageview')
  const [interval, setIntervalName] = useState('day')
  const [range, setRange] = useState('-30d')
  const [state, run] = useRun(api, project)
  const submit = (e) => {
    e.preventDefault()
    run({
      kind: 'LifecycleQuery',
      series: [seriesNode(event, defs)],
      ...cohortFilter(cohort),
      interval,
      dateRange: { date_from: range },
    })
  }
  const results = state.result?.results ?? []
  return html`<form class="builder" onSubmit=${submit} aria-label="Lifecycle">
      <div class="fields">
        <div><${CohortSelect} id="life-cohort" defs=${defs} value=${cohort} onChange=${setCohort} /></div>
        <div><${EventInput} api=${api} project=${project} defs=${defs} id="life-event" label="Event" value=${event} onChange=${setEvent} /></div>
        <div>
          <label for="life-interval">Interval</label
          ><select
            id="life-interval"
            value=${interval}
            onChange=${(e) => setIntervalName(e.currentTarget.value)}
          >
            ${['hour', 'day', 'week', 'month'].map((v) => html`<option value=${v}>${v}</option>`)}
          </select>
        </div>
        <div><${RangeSelect} id="life-range" value=${range} onChange=${setRange} /></div>
        <div class="submit">
          <button type="submit" disabled=${state.busy}>
            ${state.busy ? 'Calculating…' : 'Show lifecycle'}
          </button>
        </div>
      </div>
    </form>
    <${ErrorBox} error=${state.error} />
    <${SaveInsight} api=${api} project=${project} query=${state.query} />
    ${
      results.length
        ? html`<${BarChart}
            stacked
            categories=${results[0].labels}
            series=${results.map((r) => ({ label: r.status, values: r.data, color: LIFECYCLE_COLORS[r.status] }))}
            label="Lifecycle: ${results.map((r) => `${r.status} ${num(r.count)}`).join(', ')}"
          />`
        : null
    }`
}

// Flags: list, switch on/off, create, edit rollout and variants, see usage (docs/flags.md).
import { useEffect, useState } from 'preact/hooks'
import { html } from '../lib/html.js'
import { projectPath, segment } from '../lib/api.js'
import { num } from '../lib/format.js'
import { go } from '../lib/route.js'
import { Card, ErrorBox } from '../components/ui.js'

function rolloutText(flag) {
  const groups = flag.filters?.groups ?? []
  if (!groups.length) return 'no condition'
  return groups
    .map(
      (g) =>
        `${g.rollout_percentage ?? 100}%${g.properties?.length ? ` of ${g.properties.length}-filter set` : ''}`,
    )
    .join(', ')
}

function Usage({ api, project, flag, compact }) {
  const [usage, setUsage] = useState(null)
  useEffect(() => {
    api
      .get(projectPath(project.id, `feature_flags/${segment('int', flag.id)}/usage/?days=30`))
      .then(setUsage, () => setUsage(false))
  }, [flag.id])
  if (usage === null) return html`<span class="muted">…</span>`
  if (usage === false) return html`<span class="muted">n/a</span>`
  if (compact) return html`<span>${num(usage.called.calls)}</span>`
  const variants = Object.entries(usage.called.by_variant ?? {})
  return html`<p>
      ${num(usage.called.calls)} <code>$feature_flag_called</code> events
      and ${num(usage.property.calls)} events carrying <code>$feature/${flag.key}</code> in the last 30 days.
    </p>
    ${
      variants.length
        ? html`<table class="plain">
            <thead>
              <tr>
                <th scope="col">Value</th>
                <th scope="col" class="n">Calls</th>
              </tr>
            </thead>
            <tbody>
              ${variants.map(
                ([v, n]) =>
                  html`<tr>
                    <td class="mono">${v}</td>
                    <td class="n">${num(n)}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`
        : null
    }`
}

function FlagList({ api, project }) {
  const [flags, setFlags] = useState(null)
  const [error, setError] = useState(null)
  const load = () =>
    api.get(projectPath(project.id, 'feature_flags/?limit=500')).then((r) => setFlags(r.results), setError)
  useEffect(() => {
    load()
  }, [project.id])
  const toggle = async (f) => {
    setError(null)
    try {
      const updated = await api.patch(projectPath(project.id, `feature_flags/${segment('int', f.id)}/`), {
        active: !f.active,
      })
      setFlags(flags.map((x) => (x.id === f.id ? updated : x)))
    } catch (err) {
      setError(err)
    }
  }
  return html`<${Card} title="Feature flags" id="flags" actions=${html`<a class="button" href="#/flags/new">New flag</a>`}>
    <${ErrorBox} error=${error} />
    ${flags && flags.length === 0 ? html`<p class="muted">No flags yet.</p>` : null}
    ${
      flags?.length
        ? html`<table class="plain">
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Name</th>
                <th scope="col">Enabled</th>
                <th scope="col">Rollout</th>
                <th scope="col">Variants</th>
                <th scope="col" class="n">Calls, 30 d</th>
              </tr>
            </thead>
            <tbody>
              ${flags.map(
                (f) =>
                  html`<tr>
                    <td><a href="#/flags/${f.id}" class="mono">${f.key}</a></td>
                    <td>${f.name}</td>
                    <td>
                      <button
                        type="button"
                        role="switch"
                        class="switch"
                        aria-checked=${f.active}
                        aria-label="Enable ${f.key}"
                        onClick=${() => toggle(f)}
                      >
                        <span></span>
                      </button>
                    </td>
                    <td>${rolloutText(f)}</td>
                    <td>
                      ${(f.filters?.multivariate?.variants ?? []).map((v) => `${v.key} ${v.rollout_percentage}%`).join(', ') || '–'}
                    </td>
                    <td class="n"><${Usage} api=${api} project=${project} flag=${f} compact /></td>
                  </tr>`,
              )}
            </tbody>
          </table>`
        : null
    }
  </${Card}>`
}

function FlagEditor({ api, project, id }) {
  const isNew = id === 'new'
  const [flag, setFlag] = useState(null)
  const [form, setForm] = useState(
    isNew
      ? {
          key: '',
          name: '',
          active: true,
          groups: [{ properties: [], rollout_percentage: 100 }],
          variants: [],
        }
      : null,
  )
  const [error, setError] = useState(null)
  const [saved, setSaved] = useState(false)
  useEffect(() => {
    if (isNew) return
    api.get(projectPath(project.id, `feature_flags/${segment('int', id)}/`)).then((f) => {
      setFlag(f)
      setForm({
        key: f.key,
        name: f.name,
        active: f.active,
        groups: f.filters?.groups?.length ? f.filters.groups : [{ properties: [], rollout_percentage: 100 }],
        variants: f.filters?.multivariate?.variants ?? [],
      })
    }, setError)
  }, [id])
  if (!form)
    return html`<${ErrorBox} error=${error} />
      <p aria-live="polite">Loading…</p>`
  const set = (patch) => {
    setSaved(false)
    setForm({ ...form, ...patch })
  }
  const setGroup = (i, patch) =>
    set({ groups: form.groups.map((g, j) => (j === i ? { ...g, ...patch } : g)) })
  const setVariant = (i, patch) =>
    set({ variants: form.variants.map((v, j) => (j === i ? { ...v, ...patch } : v)) })
  const total = form.variants.reduce((s, v) => s + Number(v.rollout_percentage || 0), 0)
  const save = async (e) => {
    e.preventDefault()
    setError(null)
    const filters = {
      ...(flag?.filters ?? {}),
      groups: form.groups.map((g) => ({ ...g, rollout_percentage: Number(g.rollout_percentage) })),
      multivariate: form.variants.length
        ? { variants: form.variants.map((v) => ({ ...v, rollout_percentage: Number(v.rollout_percentage) })) }
        : null,
    }
    try {
      if (isNew) {
        const created = await api.post(projectPath(project.id, 'feature_flags/'), {
          key: form.key,
          name: form.name,
          active: form.active,
          filters,
        })
        go(`flags/${created.id}`)
      } else {
        setFlag(
          await api.patch(projectPath(project.id, `feature_flags/${segment('int', id)}/`), {
            name: form.name,
            active: form.active,
            filters,
          }),
        )
        setSaved(true)
      }
    } catch (err) {
      setError(err)
    }
  }
  return html`<p><a href="#/flags">← All flags</a></p>
    <div class="grid2">
      <${Card} title=${isNew ? 'New flag' : `Flag ${form.key}`} id="flag-form">
        <form onSubmit=${save} class="stack">
          <label for="flag-key">Key</label>
          <input id="flag-key" class="mono" value=${form.key} required pattern="[a-zA-Z0-9_\\-]+" readonly=${!isNew} onInput=${(e) => set({ key: e.currentTarget.value })} />
          <label for="flag-name">Description</label>
          <input id="flag-name" value=${form.name} onInput=${(e) => set({ name: e.currentTarget.value })} />
          <label class="check"><input type="checkbox" checked=${form.active} onChange=${(e) => set({ active: e.currentTarget.checked })} /> Enabled</label>
          <fieldset>
            <legend>Release conditions</legend>
            ${form.groups.map(
              (g, i) =>
                html`<div class="series-row">
                  <label for="flag-rollout-${i}">Set ${i + 1}${g.properties?.length ? ` (${g.properties.length} property filters, kept)` : ': everyone'}, rollout %</label>
                  <input
                    id="flag-rollout-${i}"
                    type="number"
                    min="0"
                    max="100"
                    step="any"
                    value=${g.rollout_percentage ?? 100}
                    onInput=${(e) => setGroup(i, { rollout_percentage: e.currentTarget.value })}
                  />
                  ${form.groups.length > 1 ? html`<button type="button" class="secondary small" onClick=${() => set({ groups: form.groups.filter((_, j) => j !== i) })}>Remove set ${i + 1}</button>` : null}
                </div>`,
            )}
          </fieldset>
          <fieldset>
            <legend>Variants ${form.variants.length ? html`<span class=${Math.abs(total - 100) < 0.01 ? 'muted' : 'bad'}>(sum ${total}%)</span>` : '(none: a boolean flag)'}</legend>
            ${form.variants.map(
              (v, i) =>
                html`<div class="series-row">
                  <label for="variant-key-${i}">Variant ${i + 1} key</label>
                  <input
                    id="variant-key-${i}"
                    class="mono"
                    value=${v.key}
                    required
                    onInput=${(e) => setVariant(i, { key: e.currentTarget.value })}
                  />
                  <label for="variant-pct-${i}">%</label>
                  <input
                    id="variant-pct-${i}"
                    type="number"
                    min="0"
                    max="100"
                    step="any"
                    value=${v.rollout_percentage}
                    onInput=${(e) => setVariant(i, { rollout_percentage: e.currentTarget.value })}
                  />
                  <button
                    type="button"
                    class="secondary small"
                    onClick=${() => set({ variants: form.variants.filter((_, j) => j !== i) })}
                  >
                    Remove
                  </button>
                </div>`,
            )}
            <button type="button" class="secondary small" onClick=${() => set({ variants: [...form.variants, { key: form.variants.length ? `variant-${form.variants.length + 1}` : 'control', rollout_percentage: 0 }] })}>Add variant</button>
          </fieldset>
          <${ErrorBox} error=${error} />
          ${saved ? html`<p role="status" class="ok-text">Saved (version ${flag?.version}).</p>` : null}
          <div><button type="submit">${isNew ? 'Create flag' : 'Save'}</button></div>
        </form>
      </${Card}>
      ${flag ? html`<${Card} title="Usage" id="flag-usage"><${Usage} api=${api} project=${project} flag=${flag} /></${Card}>` : null}
    </div>`
}

export function FlagsPage({ api, project, route }) {
  return html`<h1>Flags</h1>
    ${route[0] ? html`<${FlagEditor} key=${route[0]} api=${api} project=${project} id=${route[0]} />` : html`<${FlagList} api=${api} project=${project} />`}`
}

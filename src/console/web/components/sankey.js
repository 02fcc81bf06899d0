// Paths as a Sankey diagram (SVG): a column per step, a node per page or event with its count, a
// link per edge as wide as its count. Clicking (or Enter on) a link says how many went that way.
// d3-sankey is loaded the first time a diagram is drawn.
import { useEffect, useRef, useState } from 'preact/hooks'
import { html } from '../lib/html.js'
import { num } from '../lib/format.js'
import { duration } from '../lib/web-stats.js'
import { PALETTE } from './time-chart.js'

let loading = null
const loadLayout = () => (loading ??= import('../lib/sankey.js'))

const describe = (l) =>
  `${l.source.label} (step ${l.source.step}) → ${l.target.label} (step ${l.target.step}): ${num(l.value)}`

export function Sankey({ edges, height: fixedHeight }) {
  const box = useRef(null)
  const [W, setW] = useState(900)
  const [lib, setLib] = useState(null)
  const [error, setError] = useState(null)
  const [picked, setPicked] = useState(null)
  useEffect(() => {
    loadLayout().then(setLib, setError)
    const el = box.current
    const resize = new ResizeObserver(() => setW(Math.max(320, el.clientWidth)))
    resize.observe(el)
    return () => resize.disconnect()
  }, [])
  useEffect(() => setPicked(null), [edges])
  // as tall as the busiest column needs, so small counts stay visible
  const perColumn = new Map()
  for (const e of edges) {
    for (const key of [e.source, e.target]) {
      const step = String(key).split('_')[0]
      if (!perColumn.has(step)) perColumn.set(step, new Set())
      perColumn.get(step).add(key)
    }
  }
  const busiest = Math.max(1, ...[...perColumn.values()].map((s) => s.size))
  const H = fixedHeight ?? Math.max(240, Math.min(900, busiest * 56))
  const layout = lib ? lib.layoutPaths(edges, W, H) : null
  const columns = layout ? Math.max(...layout.nodes.map((n) => n.step)) : 0
  const select = (l) => setPicked(l)
  return html`<figure class="chart sankey" ref=${box}>
    ${error ? html`<div class="error" role="alert">${String(error.message ?? error)}</div>` : null}
    ${
      layout
        ? html`<svg viewBox="0 0 ${W} ${H}" width=${W} height=${H} role="group" aria-label="Paths diagram: ${layout.nodes.length} nodes, ${layout.links.length} links">
            <g class="sankey-links" fill="none">
              ${layout.links.map(
                (l, i) =>
                  html`<path
                    class="sankey-link ${picked === l ? 'picked' : ''}"
                    d=${l.path}
                    stroke=${PALETTE[(l.source.index ?? i) % PALETTE.length]}
                    stroke-width=${Math.max(1, l.width)}
                    data-source=${l.source.id}
                    data-target=${l.target.id}
                    data-value=${l.value}
                    tabindex="0"
                    role="button"
                    aria-label=${describe(l)}
                    onClick=${() => select(l)}
                    onKeyDown=${(e) => {
                      if (e.key === 'Enter' || e.key === ' ') {
                        e.preventDefault()
                        select(l)
                      }
                    }}
                  ><title>${describe(l)}</title></path>`,
              )}
            </g>
            <g class="sankey-nodes">
              ${layout.nodes.map((n) => {
                const last = n.step === columns && columns > 1
                return html`<g class="sankey-node" data-id=${n.id} data-value=${n.value}>
                  <rect x=${n.x0} y=${n.y0} width=${n.x1 - n.x0} height=${Math.max(1, n.y1 - n.y0)} fill="#1e3a8a"
                    ><title>${n.step}. ${n.item}: ${num(n.value)}</title></rect
                  >
                  <text
                    x=${last ? n.x0 - 6 : n.x1 + 6}
                    y=${(n.y0 + n.y1) / 2}
                    dy="0.35em"
                    text-anchor=${last ? 'end' : 'start'}
                    ><tspan class="sankey-label">${n.label.length > 40 ? `${n.label.slice(0, 39)}…` : n.label}</tspan
                    ><tspan class="sankey-count" dx="6">${num(n.value)}</tspan></text
                  >
                </g>`
              })}
            </g>
          </svg>`
        : html`<p class="hint" aria-live="polite">Drawing…</p>`
    }
    <figcaption role="status" class="sankey-picked">
      ${
        picked
          ? html`<strong>${num(picked.value)}</strong> went from <strong>${picked.source.label}</strong> (step ${picked.source.step}) to <strong>${picked.target.label}</strong> (step ${picked.target.step})${picked.average_conversion_time !== null ? `, in ${duration(picked.average_conversion_time / 1000)} on average` : ''}.`
          : layout
            ? html`<span class="hint">Click a link for its count.</span>`
            : null
      }
    </figcaption>
  </figure>`
}

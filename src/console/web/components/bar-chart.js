// Category bars drawn as SVG: the Explore bar chart and lifecycle's stacked bars (negative values
// go below the axis). Few categories, so SVG elements are cheap and each bar has a tooltip.
import { useEffect, useRef, useState } from 'preact/hooks'
import { html } from '../lib/html.js'
import { num } from '../lib/format.js'
import { PALETTE } from './time-chart.js'

/** categories: labels; series: [{label, values, color}]; stacked stacks series per category. */
/** Round tick spacing (1, 2 or 5 × 10^k) giving about `count` ticks over `span`. */
export function niceStep(span, count = 4) {
  const raw = span / count
  const p = 10 ** Math.floor(Math.log10(raw))
  const m = raw / p
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p
}

export function BarChart({ categories, series, stacked = false, height = 280, label }) {
  const box = useRef(null)
  const [W, setW] = useState(900)
  useEffect(() => {
    const el = box.current
    const resize = new ResizeObserver(() => setW(Math.max(300, el.clientWidth)))
    resize.observe(el)
    return () => resize.disconnect()
  }, [])
  const H = height
  const pad = { l: 64, r: 40, t: 12, b: 56 }
  let hi = 0
  let lo = 0
  categories.forEach((_, i) => {
    if (stacked) {
      let pos = 0
      let neg = 0
      for (const s of series) {
        const v = Number(s.values[i]) || 0
        if (v >= 0) pos += v
        else neg += v
      }
      hi = Math.max(hi, pos)
      lo = Math.min(lo, neg)
    } else {
      for (const s of series) {
        const v = Number(s.values[i]) || 0
        hi = Math.max(hi, v)
        lo = Math.min(lo, v)
      }
    }
  })
  if (hi === lo) hi = lo + 1
  const step = niceStep(hi - lo)
  hi = Math.ceil(hi / step) * step
  lo = Math.floor(lo / step) * step
  const plotH = H - pad.t - pad.b
  const plotW = W - pad.l - pad.r
  const y = (v) => pad.t + ((hi - v) / (hi - lo)) * plotH
  const band = plotW / Math.max(1, categories.length)
  const groupW = band * 0.75
  const barW = stacked ? groupW : groupW / Math.max(1, series.length)
  const ticks = Array.from({ length: Math.round((hi - lo) / step) + 1 }, (_, k) => lo + step * k)
  // Labels about 110 px apart at most, so they never overlap.
  const every = Math.max(1, Math.ceil(categories.length / Math.max(1, Math.floor(plotW / 110))))
  const bars = []
  categories.forEach((c, i) => {
    let pos = 0
    let neg = 0
    series.forEach((s, j) => {
      const v = Number(s.values[i]) || 0
      let from = 0
      let to = v
      if (stacked) {
        if (v >= 0) {
          from = pos
          pos += v
          to = pos
        } else {
          from = neg
          neg += v
          to = neg
        }
      }
      const x = pad.l + band * i + (band - groupW) / 2 + (stacked ? 0 : barW * j)
      const top = y(Math.max(from, to))
      const h = Math.max(0, Math.abs(y(from) - y(to)))
      bars.push(
        html`<rect
          x=${x}
          y=${top}
          width=${Math.max(1, barW - 1)}
          height=${h}
          fill=${s.color ?? PALETTE[j % PALETTE.length]}
        >
          <title>${c} · ${s.label}: ${num(v)}</title>
        </rect>`,
      )
    })
  })
  return html`<figure class="chart" ref=${box}>
    <svg viewBox="0 0 ${W} ${H}" width=${W} height=${H} role="img" aria-label=${label ?? 'bar chart'}>
      ${ticks.map(
        (t) =>
          html`<g>
            <line x1=${pad.l} x2=${W - pad.r} y1=${y(t)} y2=${y(t)} stroke="#e5e7eb" />
            <text x=${pad.l - 6} y=${y(t) + 4} text-anchor="end" class="tick"
              >${num(Math.round(t * 100) / 100)}</text
            >
          </g>`,
      )}
      <line x1=${pad.l} x2=${W - pad.r} y1=${y(0)} y2=${y(0)} stroke="#6b7280" />
      ${bars}
      ${categories.map((c, i) =>
        i % every === 0
          ? html`<text x=${pad.l + band * i + band / 2} y=${H - pad.b + 16} text-anchor="middle" class="tick">
              ${String(c).length > 14 ? `${String(c).slice(0, 13)}…` : c}
            </text>`
          : null,
      )}
    </svg>
    ${
      series.length > 1 || stacked
        ? html`<figcaption class="legend">
            ${series.map(
              (s, j) =>
                html`<span
                  ><i style="background:${s.color ?? PALETTE[j % PALETTE.length]}"></i>${s.label}</span
                >`,
            )}
          </figcaption>`
        : null
    }
  </figure>`
}

// A time-series chart (uPlot: canvas, fast enough to redraw every second with thousands of points).
import { useEffect, useRef } from 'preact/hooks'
import uPlot from 'uplot'
import { html } from '../lib/html.js'

export const PALETTE = [
  '#2563eb',
  '#16a34a',
  '#dc2626',
  '#9333ea',
  '#ea580c',
  '#0891b2',
  '#a16207',
  '#db2777',
]

/**
 * x: unix seconds; series: [{label, values}]; bars draws bars instead of lines.
 * The chart is recreated only when the series change in number or name; new data is set in place.
 */
export function TimeChart({ x, series, height = 260, bars = false, label, yLabel, utc = false }) {
  const box = useRef(null)
  const plot = useRef(null)
  const shape = series.map((s) => s.label).join('\u0000') + (bars ? '|bars' : '') + (utc ? '|utc' : '')

  useEffect(() => {
    const el = box.current
    const opts = {
      width: Math.max(200, el.clientWidth),
      height,
      legend: { show: true },
      // Query results carry wall-clock times of the project's zone: show them as they are.
      ...(utc ? { tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC') } : {}),
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true } },
      axes: [
        { stroke: '#374151', grid: { stroke: '#e5e7eb' } },
        { stroke: '#374151', grid: { stroke: '#e5e7eb' }, label: yLabel, size: 60 },
      ],
      series: [
        {},
        ...series.map((s, i) => ({
          label: s.label,
          stroke: s.color ?? PALETTE[i % PALETTE.length],
          width: 2,
          fill: bars ? `${s.color ?? PALETTE[i % PALETTE.length]}cc` : undefined,
          paths: bars ? uPlot.paths.bars({ size: [0.7, 60] }) : undefined,
          dash: s.dash,
          // Few points: show them, a line between two dots says less than the dots.
          points: { show: x.length <= 60 },
        })),
      ],
    }
    plot.current = new uPlot(opts, [x, ...series.map((s) => s.values)], el)
    const resize = new ResizeObserver(() =>
      plot.current?.setSize({ width: Math.max(200, el.clientWidth), height }),
    )
    resize.observe(el)
    return () => {
      resize.disconnect()
      plot.current?.destroy()
      plot.current = null
    }
  }, [shape, height])

  useEffect(() => {
    plot.current?.setData([x, ...series.map((s) => s.values)])
  }, [x, series])

  return html`<figure class="chart" role="img" aria-label=${label ?? 'chart'}>
    <div ref=${box}></div>
  </figure>`
}

import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client'

// Prometheus metrics of this process, served at GET /metrics.
export const registry = new Registry()
collectDefaultMetrics({ register: registry })

export const httpRequests = new Counter({
  name: 'burrow_http_requests_total',
  help: 'HTTP requests by route and status',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [registry],
})

export const capturedEvents = new Counter({
  name: 'burrow_capture_events_total',
  help: 'Events accepted into the log, by lane',
  labelNames: ['lane'] as const,
  registers: [registry],
})

export const droppedEvents = new Counter({
  name: 'burrow_capture_events_dropped_total',
  help: 'Events dropped by capture, by reason',
  labelNames: ['reason'] as const,
  registers: [registry],
})

export const publishSeconds = new Histogram({
  name: 'burrow_capture_publish_seconds',
  help: 'Time from publishing a request’s chunks to JetStream until every ack arrived',
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [registry],
})

import { LANES, type Lane } from '../../../schema/jetstream.ts'

/** NATS subject matching: `*` is one token, a final `>` one or more tokens. */
export function subjectMatches(filter: string, subject: string): boolean {
  const f = filter.split('.')
  const s = subject.split('.')
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '>') return i === f.length - 1 && s.length > i
    if (i >= s.length) return false
    if (f[i] !== '*' && f[i] !== s[i]) return false
  }
  return f.length === s.length
}

/** The lane and partition of an EVENTS subject (`events.<lane>.<partition>`), or undefined. */
export function parseEventsSubject(subject: string): { lane: Lane; partition: number } | undefined {
  const m = /^events\.([a-z]+)\.(\d+)$/.exec(subject)
  if (!m || !(LANES as readonly string[]).includes(m[1]!)) return undefined
  return { lane: m[1] as Lane, partition: Number(m[2]) }
}

/** Whether a consumer with these filters receives messages of `subject` (no filter: everything). */
export function consumerCovers(filters: string[], subject: string): boolean {
  return filters.length === 0 || filters.some((f) => subjectMatches(f, subject))
}

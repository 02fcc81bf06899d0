import { z } from 'zod'
import { definePlugin } from './plugin.ts'

// PostHog's Property Filter app: removes the listed properties before the event is stored.
// A name is first taken as a top-level key (keys may contain dots); otherwise `a.b.c` is a path
// into nested objects, e.g. `$set.email`.

const Names = z
  .union([z.array(z.string().min(1)), z.string()])
  .transform((v) =>
    (typeof v === 'string' ? v.split(',') : v).map((s) => s.trim()).filter((s) => s.length > 0),
  )
  .pipe(z.array(z.string()).min(1, 'list at least one property'))

export const propertyFilterPlugin = definePlugin({
  id: 2,
  name: 'property-filter',
  description: 'Removes the listed properties (names or dotted paths) from every event.',
  config: z.object({ properties: Names }),
  process(event, config, ctx) {
    // Copy on write: the top level here, nested objects in remove() only along a matched path.
    const props = { ...event.properties }
    const removed: string[] = []
    for (const name of config.properties) if (remove(props, name)) removed.push(name)
    if (removed.length === 0) return event
    ctx.log('DEBUG', `Removed ${removed.join(', ')} from event ${event.uuid}`)
    return { ...event, properties: props }
  },
})

function remove(obj: Record<string, unknown>, name: string): boolean {
  if (Object.hasOwn(obj, name)) {
    delete obj[name]
    return true
  }
  const parts = name.split('.')
  if (parts.length < 2) return false
  const isObject = (v: unknown): v is Record<string, unknown> =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
  // Find the path first so nothing is copied when it does not exist.
  let probe: unknown = obj
  for (const p of parts) {
    if (!isObject(probe) || !Object.hasOwn(probe, p)) return false
    probe = probe[p]
  }
  let cur = obj
  for (const p of parts.slice(0, -1)) {
    const copy = { ...(cur[p] as Record<string, unknown>) }
    cur[p] = copy
    cur = copy
  }
  delete cur[parts[parts.length - 1] as string]
  return true
}

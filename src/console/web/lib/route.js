// Hash routes (#/live, #/people/<uuid>, …): the server serves one page, the browser history works.
import { useEffect, useState } from 'preact/hooks'

/** The current route as path segments, e.g. ['people', '0190…']. */
export function currentRoute() {
  const path = location.hash.replace(/^#\/?/, '').split('?')[0]
  return path ? path.split('/').map(decodeURIComponent) : []
}

/** Re-renders on every hash change and returns the route segments. */
export function useRoute() {
  const [route, setRoute] = useState(currentRoute)
  useEffect(() => {
    const on = () => setRoute(currentRoute())
    addEventListener('hashchange', on)
    return () => removeEventListener('hashchange', on)
  }, [])
  return route
}

export const go = (path) => {
  location.hash = `#/${path}`
}

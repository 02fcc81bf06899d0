// Small shared pieces: error box, code snippet with copy, section card.
import { useState } from 'preact/hooks'
import { html } from '../lib/html.js'

/** An error message announced to screen readers. */
export function ErrorBox({ error }) {
  if (!error) return null
  const text = typeof error === 'string' ? error : error.detail || error.message || String(error)
  return html`<div class="error" role="alert">${text}</div>`
}

export function Snippet({ code, label }) {
  const [copied, setCopied] = useState(false)
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(code)
      setCopied(true)
      setTimeout(() => setCopied(false), 1500)
    } catch {}
  }
  return html`<div class="snippet">
    <div class="snippet-head">
      <span>${label}</span
      ><button type="button" class="small" onClick=${copy}>${copied ? 'Copied' : 'Copy'}</button>
    </div>
    <pre tabindex="0" aria-label=${label}><code>${code}</code></pre>
  </div>`
}

export function Card({ title, children, actions, id }) {
  return html`<section class="card" aria-labelledby=${id ? `${id}-title` : undefined}>
    ${
      title
        ? html`<header>
            <h2 id=${id ? `${id}-title` : undefined}>${title}</h2>
            ${actions}
          </header>`
        : null
    }
    ${children}
  </section>`
}

/** The snippets that send events to this Burrow with a project's API key. */
export function sdkSnippets(token) {
  const host = location.origin
  return {
    js: `<script>
  !function(t,e){var o,n,p,r;e.__SV||(window.posthog=e,e._i=[],e.init=function(i,s,a){function g(t,e){var o=e.split(".");2==o.length&&(t=t[o[0]],e=o[1]),t[e]=function(){t.push([e].concat(Array.prototype.slice.call(arguments,0)))}}(p=t.createElement("script")).type="text/javascript",p.crossOrigin="anonymous",p.async=!0,p.src=s.api_host.replace(".i.posthog.com","-assets.i.posthog.com")+"/static/array.js",(r=t.getElementsByTagName("script")[0]).parentNode.insertBefore(p,r);var u=e;for(void 0!==a?u=e[a]=[]:a="posthog",u.people=u.people||[],u.toString=function(t){var e="posthog";return"posthog"!==a&&(e+="."+a),t||(e+=" (stub)"),e},u.people.toString=function(){return u.toString(1)+".people (stub)"},o="capture identify alias people.set people.set_once set_config register register_once unregister opt_out_capturing has_opted_out_capturing opt_in_capturing reset isFeatureEnabled onFeatureFlags getFeatureFlag getFeatureFlagPayload reloadFeatureFlags group updateEarlyAccessFeatureEnrollment getEarlyAccessFeatures getActiveMatchingSurveys getSurveys onSessionId".split(" "),n=0;n<o.length;n++)g(u,o[n]);e._i.push([i,s,a])},e.__SV=1)}(document,window.posthog||[]);
  posthog.init('${token}', { api_host: '${host}', ui_host: '${host}' })
</script>`,
    npm: `import posthog from 'posthog-js'

posthog.init('${token}', { api_host: '${host}' })
posthog.capture('hello from posthog-js')`,
    node: `import { PostHog } from 'posthog-node'

const client = new PostHog('${token}', { host: '${host}' })
client.capture({ distinctId: 'user-1', event: 'signed up' })
await client.shutdown()`,
    curl: `curl -X POST ${host}/i/v0/e/ \\
  -H 'content-type: application/json' \\
  -d '{"api_key": "${token}", "event": "hello", "distinct_id": "user-1"}'`,
  }
}

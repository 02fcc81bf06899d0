// Server-sent events over fetch(): EventSource cannot send the Authorization header, fetch can.

/**
 * Splits a text buffer into complete events; returns them and the incomplete rest.
 * @param {string} buffer
 * @returns {{ events: { event: string, data: string }[], rest: string }}
 */
export function parseSse(buffer) {
  const events = []
  const text = buffer.replace(/\r\n?/g, '\n')
  const blocks = text.split('\n\n')
  const rest = blocks.pop() ?? ''
  for (const block of blocks) {
    let event = 'message'
    const data = []
    for (const line of block.split('\n')) {
      if (line === '' || line.startsWith(':')) continue
      const colon = line.indexOf(':')
      const field = colon < 0 ? line : line.slice(0, colon)
      let value = colon < 0 ? '' : line.slice(colon + 1)
      if (value.startsWith(' ')) value = value.slice(1)
      if (field === 'event') event = value
      else if (field === 'data') data.push(value)
    }
    if (data.length) events.push({ event, data: data.join('\n') })
  }
  return { events, rest }
}

/**
 * Reads an event stream from a fetch Response, calling onEvent(name, parsedJson) per event,
 * until the stream ends or the signal aborts.
 */
export async function readSse(response, onEvent, signal) {
  const reader = response.body.getReader()
  const decoder = new TextDecoder()
  let buffer = ''
  const abort = () => reader.cancel().catch(() => {})
  signal?.addEventListener('abort', abort)
  try {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) return
      buffer += decoder.decode(value, { stream: true })
      const { events, rest } = parseSse(buffer)
      buffer = rest
      for (const e of events) {
        let data
        try {
          data = JSON.parse(e.data)
        } catch {
          continue
        }
        onEvent(e.event, data)
      }
    }
  } finally {
    signal?.removeEventListener('abort', abort)
  }
}

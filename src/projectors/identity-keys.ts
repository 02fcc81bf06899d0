import { createHash } from 'node:crypto'

// Keys of the identity bucket. Relative keys (`t.<team>...`) name one piece of state; the store puts
// them under a namespace (`<ns>.t.<team>...`) so that replay can build a complete second copy and
// switch to it by changing a pointer. KV keys allow only [-/_=.A-Za-z0-9]: ids and group keys are
// base64url-encoded, long ones hashed (the value holds the real id, so a hash only has to be unique).

const MAX_ENCODED = 160

/** An id as a KV key part: base64url, or a hash when long. */
export function encodeKeyPart(s: string): string {
  const known = encoded.get(s)
  if (known !== undefined) return known
  const b64 = Buffer.from(s, 'utf8').toString('base64url')
  const part = b64.length <= MAX_ENCODED ? `b${b64}` : `h${createHash('sha256').update(s).digest('hex')}`
  // The same ids come back event after event: remembered (a bounded memo, cleared when full).
  if (encoded.size >= ENCODED_MEMO) encoded.clear()
  encoded.set(s, part)
  return part
}

const ENCODED_MEMO = 100_000
const encoded = new Map<string, string>()

/**
 * Values made once per name and then handed out again: the same key object each time, whose hash
 * the maps it is looked up in (the batch's overlay, the cache) keep with it. A key built afresh is
 * a new string for every read, concatenated, then flattened and hashed by each lookup; an event reads
 * its distinct id and person several times (prefetch, the rules, their overlay). Bounded: cleared
 * when full, as the encodings are.
 */
export class KeyMemo<K, V = string> {
  private readonly byName = new Map<K, V>()

  constructor(
    private readonly make: (name: K) => V,
    private readonly max = KEY_MEMO,
  ) {}

  /** The value of `name`, made on first use. */
  of(name: K): V {
    let key = this.byName.get(name)
    if (key === undefined) {
      key = this.make(name)
      if (this.byName.size >= this.max) this.byName.clear()
      this.byName.set(name, key)
    }
    return key
  }
}

const KEY_MEMO = 100_000

/**
 * A relative key and, once the store has read it, its full key in that namespace: a read of a key
 * met before then costs one lookup by name (this) and one in the cache, not a third one for the
 * full key. (In a large map each lookup is a few cache misses: they, not the hashing, are its cost.)
 */
export class KeyRef {
  /** the namespace `full` is in ('' until read) */
  ns = ''
  full = ''

  constructor(readonly rel: string) {}
}

// Per team and kind of key, by the name itself (a person id as it is, a distinct id before its
// encoding). Bounded over all teams together (a process may serve many): all are forgotten once
// KEY_MEMO keys of the kind are held.
function teamKeys(prefix: (team: number) => string, part: (name: string) => string) {
  const teams = new Map<number, { head: string; refs: Map<string, KeyRef> }>()
  let held = 0
  return (team: number, name: string): KeyRef => {
    let t = teams.get(team)
    if (t === undefined) teams.set(team, (t = { head: prefix(team), refs: new Map() }))
    let ref = t.refs.get(name)
    if (ref === undefined) {
      if (held >= KEY_MEMO) {
        teams.clear()
        held = 0
        teams.set(team, (t = { head: t.head, refs: new Map() }))
      }
      ref = new KeyRef(t.head + part(name))
      t.refs.set(name, ref)
      held++
    }
    return ref
  }
}

const asItIs = (id: string) => id

/** Relative key of a person, with its full key (see KeyRef). */
export const personKeyRef = teamKeys((team) => `t.${team}.p.`, asItIs)
/** Relative key of a distinct id (which person it points to), with its full key. */
export const distinctIdKeyRef = teamKeys((team) => `t.${team}.d.`, encodeKeyPart)
/** Relative key marking a distinct id whose events were stamped personless, with its full key. */
export const personlessKeyRef = teamKeys((team) => `t.${team}.pl.`, encodeKeyPart)

/** Relative key of a person. */
export const personKey = (team: number, id: string) => personKeyRef(team, id).rel
/** Relative key of a distinct id (which person it points to). */
export const distinctIdKey = (team: number, distinctId: string) => distinctIdKeyRef(team, distinctId).rel
/** Relative key marking a distinct id whose events were stamped personless. */
export const personlessKey = (team: number, distinctId: string) => personlessKeyRef(team, distinctId).rel
/** Relative key of a team's group types. */
export const groupTypesKey = (team: number) => `t.${team}.gt`
/** Relative key of a group. */
export const groupKey = (team: number, index: number, key: string) =>
  `t.${team}.g.${index}.${encodeKeyPart(key)}`

/** The full-key prefix of a team's state in a namespace. */
export const teamPrefix = (ns: string, team: number) => `${ns}.t.${team}`
/** Full key of a source's watermark in a namespace. */
export const watermarkKey = (ns: string, source: string) => `${ns}.w.${source}`
/** Key of the pointer naming a team's (or the default) current namespace. */
export const namespacePointerKey = (team: number | 'default') =>
  team === 'default' ? 'nsp.default' : `nsp.t.${team}`

/** The namespace in use until a replay switches it. */
export const LIVE_NAMESPACE = 'live'

/** A source is one ordered feed of the log (a lane's durable consumer, or a replay). */
export function sourceName(...parts: string[]): string {
  return parts.join('-').replace(/[^A-Za-z0-9_-]/g, '_')
}

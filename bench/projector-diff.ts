// A differential check of the projector's decisions, for changes that must not change a byte: prints
// every event row line, identity row line, person change, dead letter and outcome count prepareBatch
// produces for a varied log (identifies, aliases, $merge_dangerously, $set / $set_once / $unset,
// legacy top-level $set, groups and $groupidentify, personless events, escapes, invalid events, the
// same persons over many batches, batches decided over an uncommitted previous one), then every value
// of the identity bucket. Run it on two trees and compare the outputs byte for byte:
//   ROOT=/work/main npx tsx bench/projector-diff.ts > before.txt
//   ROOT=$PWD npx tsx bench/projector-diff.ts > after.txt && cmp before.txt after.txt
// (ROOT: the tree whose src/ is run; default this one.) Nothing random: fixed uuids, times, ids.
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { KV } from '@nats-io/kv'
import type { LogMessage, PreparedBatch } from '../src/projectors/batch.ts'
import { benchNatsServer, decideOnlyContext } from './lib.ts'

const root = resolve(process.env.ROOT ?? join(fileURLToPath(import.meta.url), '../..'))
const from = async <T>(path: string): Promise<T> => (await import(join(root, path))) as T

const { BUCKETS } = await from<typeof import('../schema/jetstream.ts')>('schema/jetstream.ts')
const { bucket, connectNats, migrateJetStream } = await from<typeof import('../src/jetstream/connection.ts')>(
  'src/jetstream/connection.ts',
)
const { createLogger } = await from<typeof import('../src/observability/logger.ts')>(
  'src/observability/logger.ts',
)
const { KvIdentityStore } = await from<typeof import('../src/projectors/identity-store/store.ts')>(
  'src/projectors/identity-store/store.ts',
)
const { prepareBatch } =
  await from<typeof import('../src/projectors/prepare.ts')>('src/projectors/prepare.ts')
const { LIVE_TABLES } = await from<typeof import('../src/projectors/tables.ts')>('src/projectors/tables.ts')

const TEAM = 1
const T0 = Date.UTC(2024, 0, 1)
let n = 0

/** An event as capture stamps it, with a fixed uuid and time. */
function ev(event: string, distinctId: string, properties: Record<string, unknown> = {}, extra = {}) {
  n++
  return {
    uuid: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    event,
    distinct_id: distinctId,
    properties,
    timestamp: new Date(T0 + n * 1000).toISOString(),
    now: new Date(T0 + n * 1000 + 500).toISOString(),
    sent_at: null,
    ip: null,
    team_id: TEAM,
    ...extra,
  }
}

const web = (i: number) => ({
  $current_url: `https://example.com/p/${i % 7}`,
  $browser: i % 3 ? 'Chrome' : 'Firefox',
  $os: 'Mac OS X',
  $session_id: `s-${i % 5}`,
  utm_source: i % 4 ? undefined : 'news',
  n: i,
  nested: { a: i % 3, b: 'x' },
})
const OFF = { $process_person_profile: false }

// The log, batch by batch.
const batches: unknown[][] = []
batches.push([
  ev('$pageview', 'u1', { ...web(1), $set: { plan: 'free', obj: { k: [1, 2] } } }),
  ev('$pageview', 'u1', { ...web(2), $set: { plan: 'free', obj: { k: [1, 2] } } }),
  ev('$pageview', 'u2', { ...web(3), $set_once: { first: 'x' }, $set: { tab: 'a\tb\nc\\d"e\'' } }),
  ev('$pageview', 'anon1', web(4)),
  ev('$identify', 'u1', { ...web(5), $anon_distinct_id: 'anon1', $set: { email: 'u1@example.com' } }),
  ev('clicked', 'pl1', { ...OFF, x: 1, $set: { ignored: true } }),
  ev('clicked', 'pl1', { ...OFF, x: 2 }),
  ev('$identify', 'u3', { $anon_distinct_id: 'pl1' }),
  ev('$create_alias', 'u2', { alias: 'u2-alias' }),
  ev('$pageview', 'u2-alias', { ...web(6), $unset: ['first'] }),
  ev('$groupidentify', 'u1', { $group_type: 'company', $group_key: 'acme', $group_set: { name: 'Acme' } }),
  ev('bought', 'u1', { $groups: { company: 'acme', project: 'p1' }, $set: { plan: 'pro' } }),
  ev('bad', '', {}), // no distinct id: dead letter
  ev('$identify', 'u4', { $anon_distinct_id: 'anonymous' }), // illegal id: a warning, no merge
  ev('legacy', 'u5', { a: 1 }, { $set: { top: 'level' }, $set_once: { once: 1 } }),
])
batches.push([
  ev('$pageview', 'u1', web(7)),
  ev('$pageview', 'u6', { ...web(8), $set: { plan: 'free' } }),
  ev('$identify', 'u6', { $anon_distinct_id: 'u2' }), // u2 not identified: merged
  ev('$merge_dangerously', 'u1', { alias: 'u6' }), // u6 identified: only $merge_dangerously merges
  ev('$identify', 'u3', { $anon_distinct_id: 'u1' }), // u1 identified: refused with a warning
  ev('$groupidentify', 'u3', { $group_type: 'company', $group_key: 'acme', $group_set: { name: 'Acme' } }),
  ev('$groupidentify', 'u3', { $group_type: 'company', $group_key: 'acme', $group_set: { size: 10 } }),
  ...['t2', 't3', 't4', 't5', 't6'].map((t) =>
    ev('$groupidentify', 'u3', { $group_type: t, $group_key: `${t}-k\u0000`, $group_set: { t } }),
  ),
  ev('$groupidentify', 'u3', { $group_type: 'company', $group_key: 'x'.repeat(401) }), // dropped
  ev('$groupidentify', 'u3', { $group_type: 'company', $group_key: 'g', $group_set: 'bad' }), // dropped
  ev('$identify', 'u7', { ...OFF, $anon_distinct_id: 'a' }), // dropped: person event without person
  ev('clicked', 'u1', { ...OFF }), // personless event of a person
  ev('$pageview', 'u8', { $set: { ['__proto__']: { polluted: 1 }, k: 'v' } }),
  ev('$pageview', 'u8', { $set: { k: 'v', unicode: 'é 😀 \u2028' }, $set_once: { k: 'w' } }),
  ev('$pageview', 'u8', { $set: { k: 'v2' }, $unset: ['unicode'] }),
  ev('$pageview', 'u8', { $set: { k: 'v2', nan: null, z: 0 } }),
  ev('$pageview', 'u8', { $set: { z: -0, arr: [{ a: 1 }], $creator_event_uuid: 'mine' } }),
])
// The same persons again and again, as a projector's returning users.
for (let b = 0; b < 6; b++) {
  batches.push(
    Array.from({ length: 40 }, (_, j) => {
      const i = b * 40 + j
      const who = `r${i % 13}`
      const props: Record<string, unknown> = { ...web(i) }
      if (i % 5 === 0) props.$set = { plan: i % 2 ? 'pro' : 'free' }
      if (i % 11 === 0) props.$set_once = { signup: i }
      if (i % 17 === 0) props.$unset = ['plan']
      if (i % 19 === 0) Object.assign(props, OFF)
      if (i % 23 === 0) props.$groups = { company: `c${i % 3}` }
      if (i % 29 === 0) return ev('$identify', who, { $anon_distinct_id: `r${(i + 1) % 13}` })
      return ev(i % 7 ? '$pageview' : 'clicked', who, props)
    }),
  )
}

const log = createLogger('warn')
const nats = await benchNatsServer('projector-diff')
const nc = await connectNats(nats.url)
const out: string[] = []
try {
  await migrateJetStream(nc, { eventsMaxAgeSeconds: 0 })
  const kv = await bucket(nc, BUCKETS.identity)
  const store = new KvIdentityStore(kv, { nc })
  const ctx = decideOnlyContext(store, LIVE_TABLES, 'diff', log)
  const enc = new TextEncoder()
  const messages: LogMessage[] = batches.map((events, b) => ({
    seq: b + 2,
    subject: 'events.live.0',
    data: enc.encode(JSON.stringify({ v: 2, team_id: TEAM, lane: 'live', events })),
    redelivered: false,
  }))
  // A message that is not JSON: a whole-message dead letter.
  messages.unshift({ seq: 1, subject: 'events.live.0', data: enc.encode('{oops'), redelivered: false })

  const commit = (p: PreparedBatch) => store.commit(p.overlay.values(), ctx.source, p.seqs)
  // Odd batches are decided over the previous one before it is committed, as a lane pipelines them.
  let pending: PreparedBatch | undefined
  for (const [i, m] of messages.entries()) {
    const p = await prepareBatch(ctx, [m], () => false, pending?.overlay)
    if (pending) {
      await commit(pending)
      p.overlay.detach()
    }
    print(p)
    if (i % 2 === 1) {
      pending = p
    } else {
      await commit(p)
      pending = undefined
    }
  }
  if (pending) await commit(pending)
  await printBucket(kv)
} finally {
  await nc.close()
  await nats.stop()
}
process.stdout.write(out.join('\n') + '\n')

function print(p: PreparedBatch): void {
  const { timings: _, ...counts } = p.out
  out.push(`== batch ${p.last.seq}: ${JSON.stringify(counts, (_k, v) => (v instanceof Set ? [...v] : v))}`)
  for (const r of p.rows.events) out.push(`event ${JSON.stringify(r.line)}`)
  for (const t of p.rows.identity) for (const l of t.lines) out.push(`${t.table} ${JSON.stringify(l)}`)
  out.push(`person changes ${JSON.stringify(p.rows.personChanges)}`)
  for (const d of p.deadLetters.items) {
    const { data, ...rest } = d
    out.push(`dead letter ${JSON.stringify(rest)} ${Buffer.from(data).toString('utf8')}`)
  }
}

async function printBucket(kv: KV): Promise<void> {
  const keys: string[] = []
  for await (const k of await kv.keys()) keys.push(k)
  for (const k of keys.sort()) {
    const e = await kv.get(k)
    out.push(`kv ${k} ${e ? Buffer.from(e.value).toString('utf8') : '(none)'}`)
  }
}

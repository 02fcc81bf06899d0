// Several projector processes sharing the log's partitions (PROJECTOR_PARTITION_LEASES=true).
// Each partition has one owner at a time: a lease in the KV bucket `burrow_projector_leases`
// (`lease.<partition>` = owner id), taken with a create (fails while another owner's lease exists)
// and renewed with a revision-checked update. The bucket's TTL expires the lease of a process that
// died, and another takes the partition over. Members announce themselves (`member.<id>`, renewed
// with the leases), and each process holds at most its fair share, ceil(partitions / members):
// a process joining makes the others release partitions (stop the partition's projector, which
// finishes its batch, then delete the lease), so a partition is never projected by two processes
// at once on a voluntary move. A process that cannot renew stops the partition's projector at once.
//
// Fencing: a process stalled past the TTL (a long pause) must not write once another took the
// partition over. Each unit calls its fence before every write that others could see (rows, the
// identity commit, resolved events): it passes at once while the last renewal is less than half a
// TTL old (the lease cannot have expired, so at least half a TTL is left for the write), and
// otherwise renews with a revision-checked update first, which fails once the lease expired or
// changed hands. A failed fence drops the lease and stops the unit without acknowledging anything.
import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import type { KV } from '@nats-io/kv'
import type { Logger } from '../observability/logger.ts'
import { type Fence, FencedError } from './errors.ts'

/** A partition's projector, running. */
export interface PartitionWorker {
  stop(): Promise<void>
}

export interface PartitionLeaseOptions {
  kv: KV
  partitions: number
  log: Logger
  /**
   * starts projecting partition `p` (its own durables and filter subjects); its writes call `fence`
   * first
   */
  start(p: number, fence: Fence): Promise<PartitionWorker>
  /** between renewals; a lease lives for the bucket's TTL (several renewals) */
  renewMs?: number
  /** the lease's lifetime; default: the bucket's TTL */
  ttlMs?: number
  owner?: string
}

const leaseKey = (p: number) => `lease.${p}`
const memberKey = (owner: string) => `member.${owner.replace(/[^A-Za-z0-9_-]/g, '_')}`

/** The fair share of one of `members` processes over `partitions`. */
export const fairShare = (partitions: number, members: number) => Math.ceil(partitions / Math.max(members, 1))

interface Held {
  revision: number
  /** performance.now() when the last successful create or update was sent */
  renewedAt: number
  /** the renewal in flight: renewals of one lease are serialized (each needs the last revision) */
  renewing: Promise<boolean>
  worker?: PartitionWorker
  /** the worker stopping after the lease was lost */
  stopping?: Promise<void>
}

export class PartitionLeases {
  readonly owner: string
  private readonly held = new Map<number, Held>()
  private timer?: NodeJS.Timeout
  private ticking?: Promise<void>
  private stopped = false
  private ttlMs = 0

  constructor(private readonly o: PartitionLeaseOptions) {
    this.owner = o.owner ?? `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`
  }

  /** The partitions this process projects now. */
  get owned(): number[] {
    return [...this.held.keys()].sort((a, b) => a - b)
  }

  async start(): Promise<void> {
    this.ttlMs = this.o.ttlMs ?? (await this.o.kv.status()).ttl
    if (!(this.ttlMs > 0)) throw new Error('projector leases: the lease bucket needs a TTL')
    await this.tick()
    const every = this.o.renewMs ?? 2000
    this.timer = setInterval(() => {
      if (this.ticking) return
      this.ticking = this.tick()
        .catch((err) => this.o.log.warn({ err }, 'projector leases: renewal failed'))
        .finally(() => {
          this.ticking = undefined
        })
    }, every)
  }

  /** Stops every partition's projector, then gives the leases up so others take over at once. */
  async stop(): Promise<void> {
    this.stopped = true
    clearInterval(this.timer)
    await this.ticking
    await Promise.all(this.owned.map((p) => this.release(p)))
    await this.o.kv.delete(memberKey(this.owner)).catch(() => undefined)
  }

  private async members(): Promise<number> {
    let n = 0
    for await (const _ of await this.o.kv.keys('member.>')) n++
    return n
  }

  private async tick(): Promise<void> {
    if (this.stopped) return
    const { kv, partitions } = this.o
    await kv.put(memberKey(this.owner), this.owner)
    // renew first: a lease not renewed in time may be someone else's now
    for (const [p, h] of [...this.held]) if (!(await this.renew(p, h))) await h.stopping
    const fair = fairShare(partitions, await this.members())
    for (const p of this.owned.slice(fair)) await this.release(p)
    for (let p = 0; p < partitions && this.held.size < fair && !this.stopped; p++) {
      if (this.held.has(p)) continue
      let revision: number
      const renewedAt = performance.now()
      try {
        revision = await kv.create(leaseKey(p), this.owner)
      } catch {
        continue // another owner holds it
      }
      const h: Held = { revision, renewedAt, renewing: Promise.resolve(true) }
      this.held.set(p, h)
      try {
        h.worker = await this.o.start(p, () => this.fence(p, h))
        this.o.log.info({ partition: p, owner: this.owner }, 'projector leases: partition taken')
      } catch (err) {
        this.held.delete(p)
        await kv.delete(leaseKey(p), { previousSeq: h.revision }).catch(() => undefined)
        throw err
      }
      // fenced out while starting (its first batch ran into an expired lease)
      if (this.held.get(p) !== h) await h.worker.stop()
    }
  }

  /** Passes while lease `p` is still `h`, with half a TTL left at least (see the file comment). */
  private async fence(p: number, h: Held): Promise<void> {
    if (this.held.get(p) !== h) throw new FencedError(p)
    if (performance.now() - h.renewedAt < this.ttlMs / 2) return
    if (!(await this.renew(p, h))) throw new FencedError(p)
  }

  /**
   * Renews lease `p` with a revision-checked update (serialized with the other renewals of it);
   * false when it is lost: it is dropped and its worker stopped (`h.stopping`, not awaited here: a
   * fence calls this from inside the worker's batch).
   */
  private renew(p: number, h: Held): Promise<boolean> {
    h.renewing = h.renewing.then(async () => {
      if (this.held.get(p) !== h) return false
      const sentAt = performance.now()
      try {
        h.revision = await this.o.kv.update(leaseKey(p), this.owner, h.revision)
        h.renewedAt = sentAt
        return true
      } catch (err) {
        if (this.held.get(p) !== h) return false
        this.o.log.warn({ err, partition: p }, 'projector leases: lease lost, stopping the partition')
        this.held.delete(p)
        h.stopping = h.worker?.stop()
        return false
      }
    })
    return h.renewing
  }

  private async release(p: number): Promise<void> {
    const h = this.held.get(p)
    if (!h) return
    // still held while the worker finishes its batch: that batch's fence passes
    await h.worker?.stop()
    this.held.delete(p)
    // only our own lease: a revision-checked delete would need the last revision, which we hold
    await this.o.kv.delete(leaseKey(p), { previousSeq: h.revision }).catch(() => undefined)
    this.o.log.info({ partition: p, owner: this.owner }, 'projector leases: partition released')
  }
}

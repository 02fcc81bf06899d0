// Several projector processes sharing the log's partitions (PROJECTOR_PARTITION_LEASES=true).
// Each partition has one owner at a time: a lease in the KV bucket `burrow_projector_leases`
// (`lease.<partition>` = owner id), taken with a create (fails while another owner's lease exists)
// and renewed with a revision-checked update. The bucket's TTL expires the lease of a process that
// died, and another takes the partition over. Members announce themselves (`member.<id>`, renewed
// with the leases), and each process holds at most its fair share, ceil(partitions / members):
// a process joining makes the others release partitions (stop the partition's projector, which
// finishes its batch, then delete the lease), so a partition is never projected by two processes
// at once on a voluntary move. A process that cannot renew stops the partition's projector at once.
import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import type { KV } from '@nats-io/kv'
import type { Logger } from '../observability/logger.ts'

/** A partition's projector, running. */
export interface PartitionWorker {
  stop(): Promise<void>
}

export interface PartitionLeaseOptions {
  kv: KV
  partitions: number
  log: Logger
  /** starts projecting partition `p` (its own durables and filter subjects) */
  start(p: number): Promise<PartitionWorker>
  /** between renewals; a lease lives for the bucket's TTL (several renewals) */
  renewMs?: number
  owner?: string
}

const leaseKey = (p: number) => `lease.${p}`
const memberKey = (owner: string) => `member.${owner.replace(/[^A-Za-z0-9_-]/g, '_')}`

/** The fair share of one of `members` processes over `partitions`. */
export const fairShare = (partitions: number, members: number) => Math.ceil(partitions / Math.max(members, 1))

interface Held {
  revision: number
  worker?: PartitionWorker
}

export class PartitionLeases {
  readonly owner: string
  private readonly held = new Map<number, Held>()
  private timer?: NodeJS.Timeout
  private ticking?: Promise<void>
  private stopped = false

  constructor(private readonly o: PartitionLeaseOptions) {
    this.owner = o.owner ?? `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`
  }

  /** The partitions this process projects now. */
  get owned(): number[] {
    return [...this.held.keys()].sort((a, b) => a - b)
  }

  async start(): Promise<void> {
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
    for (const [p, h] of this.held) {
      try {
        h.revision = await kv.update(leaseKey(p), this.owner, h.revision)
      } catch (err) {
        this.o.log.warn({ err, partition: p }, 'projector leases: lease lost, stopping the partition')
        this.held.delete(p)
        await h.worker?.stop()
      }
    }
    const fair = fairShare(partitions, await this.members())
    for (const p of this.owned.slice(fair)) await this.release(p)
    for (let p = 0; p < partitions && this.held.size < fair && !this.stopped; p++) {
      if (this.held.has(p)) continue
      let revision: number
      try {
        revision = await kv.create(leaseKey(p), this.owner)
      } catch {
        continue // another owner holds it
      }
      const h: Held = { revision }
      this.held.set(p, h)
      try {
        h.worker = await this.o.start(p)
        this.o.log.info({ partition: p, owner: this.owner }, 'projector leases: partition taken')
      } catch (err) {
        this.held.delete(p)
        await kv.delete(leaseKey(p)).catch(() => undefined)
        throw err
      }
    }
  }

  private async release(p: number): Promise<void> {
    const h = this.held.get(p)
    if (!h) return
    this.held.delete(p)
    await h.worker?.stop()
    // only our own lease: a revision-checked delete would need the last revision, which we hold
    await this.o.kv.delete(leaseKey(p), { previousSeq: h.revision }).catch(() => undefined)
    this.o.log.info({ partition: p, owner: this.owner }, 'projector leases: partition released')
  }
}

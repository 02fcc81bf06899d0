// Which captured events the projectors have written: a log message counts as projected once the
// durable consumer reading its subject acknowledged it (its stream sequence is at or below the
// consumer's ack floor; projectors ack only after ClickHouse has the rows).

export interface SeenMessage {
  seq: number
  team: number
  events: number
  /** when JetStream stored the message */
  storedMs: number
}

export interface Projected {
  team: number
  events: number
  atMs: number
}

/** Bounded memory: past this many unacknowledged messages per subject the oldest are forgotten. */
export const MAX_TRACKED_PER_SUBJECT = 200_000

interface Queue {
  items: SeenMessage[]
  head: number
}

/** Messages seen per subject and not yet acknowledged; `advance` releases them as the ack floor moves. */
export class ProjectionTracker {
  private readonly queues = new Map<string, Queue>()
  /** unprojected events per `subject|team` and per team */
  private readonly bySubjectTeam = new Map<string, number>()
  private readonly byTeam = new Map<number, number>()
  /** messages forgotten because a subject exceeded its bound (their events never count as projected) */
  forgotten = 0

  /**
   * @param startedMs messages stored before this were caught up on at start: when they turn out to be
   *   projected already, the time of projection is unknown and their storage time is used instead.
   */
  constructor(
    private readonly startedMs: number,
    private readonly maxPerSubject = MAX_TRACKED_PER_SUBJECT,
  ) {}

  see(subject: string, m: SeenMessage): void {
    let q = this.queues.get(subject)
    if (!q) this.queues.set(subject, (q = { items: [], head: 0 }))
    q.items.push(m)
    this.count(subject, m.team, m.events)
    if (q.items.length - q.head > this.maxPerSubject) {
      const old = q.items[q.head++]!
      this.count(subject, old.team, -old.events)
      this.forgotten++
    }
  }

  private count(subject: string, team: number, n: number): void {
    const k = `${subject}|${team}`
    const s = (this.bySubjectTeam.get(k) ?? 0) + n
    if (s === 0) this.bySubjectTeam.delete(k)
    else this.bySubjectTeam.set(k, s)
    const t = (this.byTeam.get(team) ?? 0) + n
    if (t === 0) this.byTeam.delete(team)
    else this.byTeam.set(team, t)
  }

  /** Releases the subject's messages at or below `ackFloor`, as projected at `nowMs` (see startedMs). */
  advance(subject: string, ackFloor: number, nowMs: number): Projected[] {
    const q = this.queues.get(subject)
    if (!q) return []
    const out: Projected[] = []
    while (q.head < q.items.length && q.items[q.head]!.seq <= ackFloor) {
      const m = q.items[q.head++]!
      this.count(subject, m.team, -m.events)
      out.push({ team: m.team, events: m.events, atMs: m.storedMs < this.startedMs ? m.storedMs : nowMs })
    }
    // Compact once the released prefix dominates, so the array does not grow without end.
    if (q.head > 1024 && q.head * 2 > q.items.length) {
      q.items.splice(0, q.head)
      q.head = 0
    }
    return out
  }

  /** Events of `team` captured on `subject` and not yet projected. */
  unprojected(subject: string, team: number): number {
    return this.bySubjectTeam.get(`${subject}|${team}`) ?? 0
  }

  /** Events of `team` not yet projected, on any subject. */
  teamPending(team: number): number {
    return this.byTeam.get(team) ?? 0
  }
}

// Compiling a query with the facts of its project's data (person-overrides.ts DataFacts: merged
// persons or not, the day cache's stored buckets). Reading those facts takes a
// round trip or two, so the compile starts beside the reads with the project's last facts as a
// guess, and runs again only when the reads say otherwise.
import type { Project } from '../accounts/documents.ts'
import type { HogQLCatalog } from '../hogql/index.ts'
import type { CompileGate } from './compile-gate.ts'
import type { BucketKind, BucketRun, DayCache } from './day-cache.ts'
import type { KindCompiled } from './kinds.ts'
import type { DataFacts, PersonOverrides } from './person-overrides.ts'

/** A compile and its own time (from its start to its answer), whenever the caller looks. */
function timed(compiling: Promise<KindCompiled>): Promise<{ compiled: KindCompiled; seconds: number }> {
  const t0 = performance.now()
  return compiling.then((compiled) => ({ compiled, seconds: (performance.now() - t0) / 1000 }))
}

/** Whether a compile for `guess` is the one `facts` ask for. */
function sameFacts(facts: DataFacts, guess: DataFacts): boolean {
  return (
    facts.personOverrides === guess.personOverrides &&
    JSON.stringify(facts.skipBuckets) === JSON.stringify(guess.skipBuckets)
  )
}

/** A query compiled with its facts, how long its compile took, and the day cache's run (if any). */
export interface FactsCompiled {
  compiled: KindCompiled
  compileSeconds: number
  buckets: BucketRun | undefined
}

/** Compiles queries with their facts, guessing from the project's last ones while the reads run. */
export class FactsCompiler {
  /** Each project's last facts: merged persons or not, and whether the day cache ran (off in cluster mode) */
  private readonly seen = new Map<number, { personOverrides: boolean; dayCache: boolean }>()

  constructor(
    private readonly gate: CompileGate,
    private readonly overrides: PersonOverrides,
    private readonly dayCache: DayCache,
  ) {}

  /**
   * `query` compiled for `project` on a server of `version`, with the facts read now; `bucketKind`:
   * the kind's day-cache cells (none: no day cache); `useStored`: stored bucket values may be used
   * (not under a force_ refresh); `catalog`: the project's cohorts and actions. Throws what the
   * compiler throws.
   */
  async compile(
    query: { kind: string },
    project: Project,
    bucketKind: BucketKind | undefined,
    version: string,
    useStored: boolean,
    catalog?: HogQLCatalog,
  ): Promise<FactsCompiled> {
    // closed buckets whose stored values still hold are left out of the statement (day-cache.ts);
    // its state read also says whether the project has merged persons, which is read here
    // otherwise: without, person_id needs no join
    const preparing = bucketKind
      ? this.dayCache.prepare(bucketKind, project, query, version, useStored)?.catch(() => undefined)
      : undefined
    const reading = (preparing ?? Promise.resolve(undefined)).then(async (buckets) => {
      const facts: DataFacts = buckets
        ? { personOverrides: buckets.personOverrides, skipBuckets: buckets.skip }
        : { personOverrides: await this.overrides.has(project.id) }
      return { buckets, facts }
    })
    // The compile does not wait for those reads when their answer can be guessed: the project's
    // last answer, and no stored bucket under a force_ mode. A wrong guess compiles again.
    const seen = this.seen.get(project.id)
    const guess: DataFacts | undefined =
      !preparing || !useStored
        ? {
            personOverrides: seen?.personOverrides ?? false,
            ...(preparing && (seen?.dayCache ?? true) ? { skipBuckets: {} } : {}),
          }
        : undefined
    const early = guess && timed(this.gate.compile(query, project, guess, catalog))
    early?.catch(() => undefined) // its failure is seen below, once the facts say it counts
    const { buckets, facts } = await reading
    this.seen.set(project.id, {
      personOverrides: facts.personOverrides,
      dayCache: preparing ? buckets !== undefined : (seen?.dayCache ?? true),
    })
    let done
    if (early && sameFacts(facts, guess!)) done = await early
    else {
      done = await timed(this.gate.compile(query, project, facts, catalog))
    }
    const { compiled, seconds: compileSeconds } = done
    return { compiled, compileSeconds, buckets }
  }
}

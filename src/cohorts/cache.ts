import type { Logger } from '../observability/logger.ts'
import type { NatsConnection } from '../jetstream/connection.ts'
import { TeamDocs } from '../jetstream/team-docs.ts'
import { CohortDoc } from './document.ts'
import { COHORT_PREFIX, CohortStore } from './store.ts'

/** Every project's cohorts, watched (src/jetstream/team-docs.ts). */
export type CohortDocs = TeamDocs<typeof CohortDoc>

// One watch per NATS connection, shared by the parts of a process (api routes, the query
// compiler's catalog, the calculator, flag evaluation).
const shared = new WeakMap<NatsConnection, Promise<CohortDocs>>()

export function cohortDocsFor(nc: NatsConnection, log: Logger): Promise<CohortDocs> {
  let docs = shared.get(nc)
  if (!docs) {
    docs = CohortStore.open(nc).then((s) =>
      TeamDocs.start(s.kv, COHORT_PREFIX, CohortDoc, log, () => nc.isClosed()),
    )
    shared.set(nc, docs)
    docs.catch(() => shared.delete(nc))
  }
  return docs
}

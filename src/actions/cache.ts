import type { Logger } from '../observability/logger.ts'
import type { NatsConnection } from '../jetstream/connection.ts'
import { TeamDocs } from '../jetstream/team-docs.ts'
import { ActionDoc } from './document.ts'
import { ACTION_PREFIX, ActionStore } from './store.ts'

/** Every project's actions, watched (src/jetstream/team-docs.ts). */
export type ActionDocs = TeamDocs<typeof ActionDoc>

// One watch per NATS connection, shared by the api routes and the query compiler's catalog.
const shared = new WeakMap<NatsConnection, Promise<ActionDocs>>()

export function actionDocsFor(nc: NatsConnection, log: Logger): Promise<ActionDocs> {
  let docs = shared.get(nc)
  if (!docs) {
    docs = ActionStore.open(nc).then((s) =>
      TeamDocs.start(s.kv, ACTION_PREFIX, ActionDoc, log, () => nc.isClosed()),
    )
    shared.set(nc, docs)
    docs.catch(() => shared.delete(nc))
  }
  return docs
}

// Insight query kinds on POST /query/: each compiles through HogQL (team guard, person merges,
// property storage) and shapes its rows as PostHog's response for that kind (docs/insights.md).
import { registerQueryKind } from '../kinds.ts'
import { eventsKind } from '../events/index.ts'
import { lifecycleKind } from './lifecycle/index.ts'
import { stickinessKind } from './stickiness/index.ts'
import { trendsKind } from './trends/index.ts'

registerQueryKind('TrendsQuery', trendsKind)
registerQueryKind('LifecycleQuery', lifecycleKind)
registerQueryKind('StickinessQuery', stickinessKind)
registerQueryKind('EventsQuery', eventsKind)

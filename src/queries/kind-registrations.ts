// Every query kind beyond HogQLQuery registers itself when its module loads. Importing this module
// loads them all: the api (src/queries/index.ts) and the compile workers (compile-worker.ts) know
// the same kinds.
import './insights/index.ts'
import './insights/funnels/index.ts'
import './insights/retention/index.ts'
import './insights/actors/index.ts'
import '../experiments/query.ts'
import '../paths/index.ts'
import '../web-analytics/overview.ts'
import '../web-analytics/stats-table.ts'

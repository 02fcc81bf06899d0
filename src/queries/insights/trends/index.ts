import type { Project } from '../../../config/documents.ts'
import type { QueryKind } from '../../kinds.ts'
import { compileTrends, type TrendsCompiled } from './query.ts'
import { shapeTrends } from './results.ts'
import { TrendsQuerySchema } from './schema.ts'

export const trendsKind: QueryKind = {
  compile: (raw: unknown, project: Project) => compileTrends(TrendsQuerySchema.parse(raw), project),
  shape: (rows, compiled) => shapeTrends(rows, (compiled as TrendsCompiled).trends),
}

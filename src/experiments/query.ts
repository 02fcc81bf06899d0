// ExperimentQuery on POST /query/ (PostHog's ExperimentQueryRunner): one metric of one experiment,
// answered with PostHog's ExperimentQueryResponse (results.ts). The experiment and its flag are read
// on the main thread (prepare) and inlined as `_experiment`, so the compile worker needs no store
// and a launch, stop or variant change makes a new cache key.
import { z } from 'zod'
import type { Project } from '../accounts/documents.ts'
import { FlagStore } from '../flags/definition-store.ts'
import { ValidationError } from '../http/errors.ts'
import type { NatsConnection } from '../jetstream/connection.ts'
import { compileHogQLCached } from '../queries/compile-cache.ts'
import { type QueryKind, registerQueryKind } from '../queries/kinds.ts'
import { testAccountsCondition } from '../queries/test-accounts.ts'
import type { Runtime } from '../runtime/types.ts'
import { metricColumns, metricHogQL } from './hogql.ts'
import { ExperimentMetric, ExposureCriteria } from './metrics.ts'
import { experimentResult } from './results.ts'
import { ExperimentStore } from './store.ts'

const Frame = z.object({
  flag_key: z.string(),
  variants: z.array(z.string()).min(1),
  start_date: z.string(),
  end_date: z.string().nullable(),
  group_type_index: z.number().int().nullable(),
  exposure_criteria: ExposureCriteria.nullable(),
  stats_method: z.enum(['bayesian', 'frequentist']),
  minimum_detectable_effect: z.number().nullable(),
})

export const ExperimentQuerySchema = z
  .object({
    kind: z.literal('ExperimentQuery'),
    experiment_id: z.number().int().positive({ message: 'experiment_id is required' }),
    metric: ExperimentMetric,
    name: z.string().nullable().optional(),
  })
  .passthrough()

/** One row per variant: a flag has at most 20 (PostHog's limit), plus `$multiple`. */
const MAX_ROWS = 1000

const Prepared = ExperimentQuerySchema.extend({ _experiment: Frame })
type Prepared = z.infer<typeof Prepared>

// One pair of stores per NATS connection (a process has one; tests may start several).
const stores = new WeakMap<NatsConnection, Promise<{ experiments: ExperimentStore; flags: FlagStore }>>()
function storesOf(nc: NatsConnection) {
  let s = stores.get(nc)
  if (!s) {
    s = Promise.all([ExperimentStore.open(nc), FlagStore.open(nc)]).then(([experiments, flags]) => ({
      experiments,
      flags,
    }))
    s.catch(() => stores.delete(nc))
    stores.set(nc, s)
  }
  return s
}

/** The query with its experiment inlined; a client's own `_experiment` is replaced. */
async function prepare(raw: unknown, project: Project, rt: Runtime): Promise<Prepared> {
  const q = ExperimentQuerySchema.parse(raw)
  const { experiments, flags } = await storesOf(rt.nc)
  const e = await experiments.get(project.id, q.experiment_id)
  if (!e || e.deleted)
    throw new ValidationError(`Experiment with id ${q.experiment_id} not found`, 'experiment_id')
  if (!e.start_date) throw new ValidationError('The experiment has not been launched yet', 'experiment_id')
  const flag = await flags.get(project.id, e.feature_flag_id).catch(() => undefined)
  if (!flag || flag.deleted)
    throw new ValidationError("The experiment's feature flag has been deleted", 'experiment_id')
  const variants = (flag.filters.multivariate?.variants ?? []).map((v) => v.key)
  if (variants.length < 2)
    throw new ValidationError('Feature flag is not eligible for experiments.', 'experiment_id')
  return Prepared.parse({
    ...q,
    _experiment: {
      flag_key: flag.key,
      variants,
      start_date: e.start_date,
      end_date: e.end_date,
      group_type_index: flag.filters.aggregation_group_type_index ?? null,
      exposure_criteria: e.exposure_criteria,
      stats_method: e.stats_config.method ?? 'bayesian',
      minimum_detectable_effect: e.parameters.minimum_detectable_effect ?? null,
    },
  })
}

function prepared(raw: unknown): Prepared {
  const r = Prepared.safeParse(raw)
  if (!r.success)
    throw new ValidationError('ExperimentQuery needs an experiment_id of this project', 'experiment_id')
  return r.data
}

export const experimentKind: QueryKind = {
  prepare,
  async compile(raw, project, facts) {
    const q = prepared(raw)
    const testAccounts = testAccountsCondition(q._experiment.exposure_criteria?.filterTestAccounts, project)
    const hogql = metricHogQL({ ...q._experiment, testAccounts }, q.metric)
    // without the default row limit
    const compiled = await compileHogQLCached(hogql, {
      teamId: project.id,
      timezone: project.timezone,
      defaultLimit: MAX_ROWS,
      maxLimit: MAX_ROWS,
      personOverrides: facts?.personOverrides,
    })
    return { ...compiled, columns: metricColumns(q.metric) }
  },
  shape(rows, _compiled, raw) {
    const q = prepared(raw)
    const e = q._experiment
    return experimentResult(rows, {
      metric: q.metric,
      variants: e.variants,
      method: e.stats_method,
      minimumDetectableEffect: e.minimum_detectable_effect,
      startDate: e.start_date,
      endDate: e.end_date,
      now: Date.now(),
    })
  },
  topLevel: true,
}

registerQueryKind('ExperimentQuery', experimentKind)

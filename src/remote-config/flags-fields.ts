import type { Project } from '../accounts/documents.ts'
import type { FlagCache } from '../flags/cache.ts'
import type { Runtime } from '../runtime/types.ts'
import { SurveyStore } from '../surveys/store.ts'
import type { RemoteConfig } from './build.ts'
import { type RemoteConfigCache, remoteConfigCacheFor, variantFor } from './cache.ts'
import { type ClientHeaders, decideConfigFields } from './serve.ts'

// The remote config fields the flag endpoints answer next to the flags, from the same cached
// document as /array/<token>/config: /flags?config=true flattens it into its body (PostHog's flags
// service, config_response_builder.rs) and /decide adds it the way PostHog's legacy decide did.

/** Where the flag endpoints get a project's remote config fields. */
export interface SdkConfigFields {
  decide(project: Project, headers: ClientHeaders): Promise<RemoteConfig>
  flags(project: Project, headers: ClientHeaders): Promise<RemoteConfig>
}

/** The fields for `rt`'s process; the cache behind them starts on first use. */
export function sdkConfigFields(rt: Runtime, flags: FlagCache): SdkConfigFields {
  let cache: Promise<RemoteConfigCache> | undefined
  const client = async (project: Project, headers: ClientHeaders): Promise<RemoteConfig> => {
    if (!cache) {
      const starting = SurveyStore.open(rt.nc).then((surveys) =>
        remoteConfigCacheFor({ nc: rt.nc, accounts: rt.accounts, flags, surveys, log: rt.log }),
      )
      cache = starting
      starting.catch(() => (cache = undefined))
    }
    const entry = await (await cache).forProject(project.id)
    return entry ? variantFor(entry, headers).config : {}
  }
  return {
    decide: async (project, headers) => decideConfigFields(await client(project, headers)),
    flags: client,
  }
}

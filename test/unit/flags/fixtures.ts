import {
  type FlagDefinition,
  type FlagDefinitionInput,
  flagDefinitionSchema,
} from '../../../src/flags/definition.ts'
import type { EvalInput } from '../../../src/flags/evaluate.ts'

let nextId = 1

// Builds definitions through the schema so tests use the same defaults the API stores.
export function flag(
  key: string,
  filters: FlagDefinitionInput['filters'],
  extra: Partial<FlagDefinitionInput> = {},
) {
  return flagDefinitionSchema.parse({ id: nextId++, key, filters, ...extra }) satisfies FlagDefinition
}

export function input(distinctId: string, extra: Partial<EvalInput> = {}): EvalInput {
  return {
    distinctId,
    personProperties: {},
    groups: {},
    groupProperties: {},
    groupTypeIndexToName: {},
    ...extra,
  }
}

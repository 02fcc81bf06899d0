import { describe, expect, it } from 'vitest'
import { pluginOutput, runPlugins } from '../../../../src/projectors/steps/run-plugins.ts'
import { captured } from './helpers.ts'

describe('runPlugins', () => {
  it('drops an event a plugin returns null for', async () => {
    expect(await runPlugins(async () => null, captured(), false)).toEqual({
      type: 'drop',
      reason: 'plugin_dropped',
    })
  })

  it('passes quiet through to the pipeline', async () => {
    const seen: boolean[] = []
    await runPlugins(
      async (e, { quiet }) => {
        seen.push(quiet)
        return e
      },
      captured(),
      true,
    )
    expect(seen).toEqual([true])
  })

  it('takes the name, distinct id and properties a plugin returns, never uuid or timestamp', async () => {
    const e = captured()
    const r = await runPlugins(
      async (x) => ({
        ...x,
        event: 'renamed',
        distinct_id: 'other',
        properties: { a: 1 },
        uuid: 'x',
        timestamp: 'y',
      }),
      e,
      false,
    )
    expect(r).toEqual({
      type: 'ok',
      value: { ...e, event: 'renamed', distinct_id: 'other', properties: { a: 1 } },
    })
  })

  it('keeps the event as captured where the plugin returns empty or invalid fields', () => {
    const e = captured()
    expect(pluginOutput(e, { ...e, event: '', distinct_id: '', properties: null as never })).toBe(e)
  })
})

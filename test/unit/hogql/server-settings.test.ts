// What Burrow sends its ClickHouse server beside every query (src/hogql/server-settings.ts).
import { describe, expect, it } from 'vitest'
import { guardSettings } from '../../../src/hogql/server-settings.ts'

describe('server settings', () => {
  it('sends only the guard settings the server knows', () => {
    expect(
      guardSettings({ version: '26.7.2.1', settings: ['enable_optimize_predicate_expression'] }),
    ).toEqual({ enable_optimize_predicate_expression: '0' })
    expect(
      guardSettings({
        version: '26.7.2.1',
        settings: ['enable_optimize_predicate_expression', 'optimize_prewhere_after_pushdown'],
      }),
    ).toEqual({ enable_optimize_predicate_expression: '0', optimize_prewhere_after_pushdown: '0' })
  })
})

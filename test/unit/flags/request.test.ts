import { describe, expect, it } from 'vitest'
import { AuthenticationError, ValidationError } from '../../../src/http/errors.ts'
import { parseFlagRequest } from '../../../src/flags/request.ts'

// The body of POST /flags and /decide as SDKs send it, and as they sometimes get it wrong.

function refusal(body: unknown): ValidationError | AuthenticationError {
  try {
    parseFlagRequest(body, undefined)
  } catch (err) {
    return err as ValidationError
  }
  throw new Error('the body was accepted')
}

describe('parseFlagRequest', () => {
  it('reads what posthog-js sends', () => {
    const r = parseFlagRequest(
      {
        token: 'phc_x',
        distinct_id: 'user-1',
        groups: { company: 'acme', team: 7 },
        person_properties: { email: 'a@b.c', age: 30 },
        group_properties: { company: { plan: 'pro' } },
        $anon_distinct_id: 'anon-1',
        timezone: 'UTC',
      },
      undefined,
    )
    expect(r).toEqual({
      token: 'phc_x',
      distinctId: 'user-1',
      groups: { company: 'acme', team: '7' },
      personProperties: { email: 'a@b.c', age: 30 },
      groupProperties: { company: { plan: 'pro' } },
      flagKeys: null,
      geoipDisable: false,
    })
  })

  it('takes the key from api_key, token, $token, then the query, in that order', () => {
    expect(parseFlagRequest({ api_key: 'a', token: 'b', distinct_id: 'x' }, 'q').token).toBe('a')
    expect(parseFlagRequest({ token: 'b', $token: 'c', distinct_id: 'x' }, 'q').token).toBe('b')
    expect(parseFlagRequest({ $token: 'c', distinct_id: 'x' }, 'q').token).toBe('c')
    expect(parseFlagRequest({ distinct_id: 'x' }, 'q').token).toBe('q')
    const missing = refusal({ distinct_id: 'x' })
    expect(missing).toBeInstanceOf(AuthenticationError)
    expect(missing.code).toBe('missing_api_key')
  })

  it('spells numeric and boolean ids as text', () => {
    expect(parseFlagRequest({ token: 't', distinct_id: 42 }, undefined).distinctId).toBe('42')
    expect(parseFlagRequest({ token: 't', distinct_id: 1.5 }, undefined).distinctId).toBe('1.5')
    expect(parseFlagRequest({ token: 't', distinct_id: false }, undefined).distinctId).toBe('false')
  })

  it('reads the flag keys and geoip_disable in their SDK forms', () => {
    const r = parseFlagRequest(
      { token: 't', distinct_id: 'x', flag_keys_to_evaluate: ['a', 'b'], geoip_disable: true },
      undefined,
    )
    expect(r.flagKeys).toEqual(['a', 'b'])
    expect(r.geoipDisable).toBe(true)
    for (const [value, disabled] of [
      ['true', true],
      [1, true],
      ['True', false],
      [0, false],
      [false, false],
      [null, false],
      [{ yes: true }, false],
    ] as const) {
      const got = parseFlagRequest({ token: 't', distinct_id: 'x', geoip_disable: value }, undefined)
      expect(got.geoipDisable, JSON.stringify(value)).toBe(disabled)
    }
  })

  it('ignores malformed optional parts instead of refusing the request', () => {
    const r = parseFlagRequest(
      {
        token: 't',
        distinct_id: 'x',
        groups: ['acme'],
        person_properties: ['not', 'a', 'bag'],
        group_properties: { company: 'acme' },
        flag_keys_to_evaluate: ['a', 1],
      },
      undefined,
    )
    expect(r).toEqual({
      token: 't',
      distinctId: 'x',
      groups: {},
      personProperties: {},
      groupProperties: {},
      flagKeys: null,
      geoipDisable: false,
    })
    const nulls = parseFlagRequest(
      { token: 't', distinct_id: 'x', groups: null, person_properties: null, group_properties: null },
      undefined,
    )
    expect([nulls.groups, nulls.personProperties, nulls.groupProperties]).toEqual([{}, {}, {}])
    // a group whose key is an object drops the whole groups map
    expect(
      parseFlagRequest({ token: 't', distinct_id: 'x', groups: { a: 'b', c: {} } }, undefined).groups,
    ).toEqual({})
  })

  it('refuses a missing, empty or malformed distinct id and a key that is not text', () => {
    for (const body of [{ token: 't' }, { token: 't', distinct_id: '  ' }]) {
      const err = refusal(body)
      expect(err).toBeInstanceOf(ValidationError)
      expect(err.attr).toBe('distinct_id')
      expect(err.code).toBe('required')
    }
    for (const [body, attr] of [
      [{ token: 't', distinct_id: null }, 'distinct_id'],
      [{ token: 't', distinct_id: { id: 1 } }, 'distinct_id'],
      [{ token: 't', distinct_id: ['x'] }, 'distinct_id'],
      [{ api_key: 12, distinct_id: 'x' }, 'api_key'],
      [{ token: ['t'], distinct_id: 'x' }, 'token'],
      [{ $token: null, distinct_id: 'x' }, '$token'],
    ] as const) {
      const err = refusal(body)
      expect(err, JSON.stringify(body)).toBeInstanceOf(ValidationError)
      expect(err.attr).toBe(attr)
      expect(err.detail.startsWith(`${attr}: `)).toBe(true)
    }
    expect(refusal([{ token: 't', distinct_id: 'x' }]).code).toBe('invalid_payload')
  })
})

import { describe, expect, it } from 'vitest'
import {
  deletedPersonLine,
  distinctIdLine,
  type EventRow,
  eventLine,
  groupLine,
  groupTypeLine,
  overrideLine,
  personLine,
} from '../../../src/projectors/rows.ts'
import { EVENT_COLUMNS } from '../../../src/projectors/tables.ts'

// The exact bytes ClickHouse receives. Expected lines are written out by hand from the TabSeparated
// rules (backslash escapes for \\ \t \n \r \0 ' \b \f) and the JSON text of the property bags.

/** The field of an events line that holds `column`. */
const at = (column: string) => EVENT_COLUMNS.indexOf(column)
const T0 = Date.UTC(2024, 4, 1, 12, 0, 0, 123) // 2024-05-01 12:00:00.123
const T1 = Date.UTC(2024, 4, 1, 12, 0, 1, 999)

function row(over: Partial<EventRow>): EventRow {
  return {
    teamId: 2,
    uuid: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
    event: '$pageview',
    distinctId: 'user-1',
    personId: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c',
    timestampMs: T0,
    properties: {},
    personProperties: {},
    elementsChain: '',
    sessionId: '',
    groups: ['', '', '', '', ''],
    createdAtMs: T1,
    seq: 42,
    offset: 3,
    ...over,
  }
}

describe('eventLine', () => {
  it('writes an event with no properties', () => {
    expect(eventLine(row({ groups: [] }))).toBe(
      [
        '2',
        '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
        '$pageview',
        'user-1',
        '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c',
        '2024-05-01 12:00:00.123',
        '{}',
        '{}',
        '',
        '',
        '',
        '',
        '',
        '',
        '',
        '2024-05-01 12:00:01',
        '42',
        '3',
      ].join('\t') + '\n',
    )
  })

  it('escapes every field and encodes a varied property bag', () => {
    // Parsed from JSON as the log delivers it, so that `__proto__` is an own key.
    const properties = JSON.parse(
      '{"s":"x","n":1.5,"b":true,"nul":null,"arr":[1,"a"],' +
        '"obj":{"k":"v\'","deep":{"d2":{"d3":{"d4":1}}}},' +
        '"we\\tird":"line\\nbreak","ctl":"\\u0000\\r\\b\\f\\u0001","u":"é😀","__proto__":"p","z":0,' +
        '"q":"say \\"hi\\" \\\\o/"}',
    ) as Record<string, unknown>
    const line = eventLine(
      row({
        event: "it's\ta\nb",
        distinctId: 'back\\slash',
        properties,
        personProperties: { email: 'a@x.io', q: "it's" },
        elementsChain: 'a.b:nth-child="1"',
        sessionId: 's\t1',
        groups: ['g0', "o'rg", '', '', 'g\\4'],
      }),
    )
    const json =
      `{"s":"x","n":1.5,"b":true,"nul":null,"arr":[1,"a"],` +
      `"obj":{"k":"v\\'","deep":{"d2":{"d3":{"d4":1}}}},` +
      `"we\\\\tird":"line\\\\nbreak","ctl":"\\\\u0000\\\\r\\\\b\\\\f\\\\u0001","u":"é😀","__proto__":"p","z":0,` +
      `"q":"say \\\\"hi\\\\" \\\\\\\\o/"}`
    expect(line.split('\t')).toEqual([
      '2',
      '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
      "it\\'s\\ta\\nb",
      'back\\\\slash',
      '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c',
      '2024-05-01 12:00:00.123',
      json,
      `{"email":"a@x.io","q":"it\\'s"}`,
      'a.b:nth-child="1"',
      's\\t1',
      'g0',
      "o\\'rg",
      '',
      '',
      'g\\\\4',
      '2024-05-01 12:00:01',
      '42',
      '3\n',
    ])
  })

  it('leaves out values JSON cannot hold', () => {
    const line = eventLine(
      row({
        properties: { inf: Number.POSITIVE_INFINITY, list: [{ a: 1 }], o: { n: null, e: {} }, u: undefined },
        personProperties: { plan: 'pro' },
      }),
    )
    const f = line.split('\t')
    expect(f[at('properties')]).toBe('{"inf":null,"list":[{"a":1}],"o":{"n":null,"e":{}}}')
    expect(f[at('person_properties')]).toBe('{"plan":"pro"}')
  })

  it('writes the same person properties field for a shared (identity state) object, event after event', () => {
    const shared = { email: 'a@x.io', q: "it's", nested: { t: 'a\tb' } }
    const field = (personProperties: Record<string, unknown>, personPropertiesShared: boolean) =>
      eventLine(row({ personProperties, personPropertiesShared })).split('\t')[at('person_properties')]
    const expected = `{"email":"a@x.io","q":"it\\'s","nested":{"t":"a\\\\tb"}}`
    expect(field(shared, true)).toBe(expected)
    expect(field(shared, true)).toBe(expected)
    expect(field({ ...shared }, false)).toBe(expected)
    // Another object, equal or not, has its own text.
    expect(field({ email: 'b@x.io' }, true)).toBe('{"email":"b@x.io"}')
    expect(field({ ...shared, q: 'x' }, true)).toBe(`{"email":"a@x.io","q":"x","nested":{"t":"a\\\\tb"}}`)
  })
})

describe('identity lines', () => {
  const person = {
    id: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c',
    createdAtMs: T0,
    properties: { email: "o'neil@x.io", tags: ['a'] },
    isIdentified: true,
    version: 5,
    distinctIds: ['user-1'],
    overriddenIds: [],
  }

  it('writes a person', () => {
    expect(personLine(2, person)).toBe(
      `2\t0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c\t2024-05-01 12:00:00.123\t` +
        `{"email":"o\\'neil@x.io","tags":["a"]}\t1\t0\t5\n`,
    )
    expect(personLine(2, { ...person, properties: {}, isIdentified: false, version: 0 })).toBe(
      `2\t0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c\t2024-05-01 12:00:00.123\t{}\t0\t0\t0\n`,
    )
  })

  it('writes a deleted person with empty properties', () => {
    expect(deletedPersonLine(2, { id: person.id, createdAtMs: T0, version: 7 })).toBe(
      `2\t${person.id}\t2024-05-01 12:00:00.123\t{}\t0\t1\t7\n`,
    )
  })

  it('writes distinct id, override, group and group type rows', () => {
    expect(distinctIdLine(2, { distinctId: 'a\tb', personId: person.id, version: 1, isDeleted: false })).toBe(
      `2\ta\\tb\t${person.id}\t0\t1\n`,
    )
    expect(distinctIdLine(2, { distinctId: 'x', personId: person.id, version: 2, isDeleted: true })).toBe(
      `2\tx\t${person.id}\t1\t2\n`,
    )
    expect(overrideLine(2, { oldPersonId: 'old', overridePersonId: 'new', version: 3 })).toBe(
      `2\told\tnew\t3\n`,
    )
    expect(
      groupLine(2, {
        groupTypeIndex: 1,
        groupKey: "acme's",
        createdAtMs: T1,
        properties: { name: 'Acme', size: 10, meta: { tier: 'gold' } },
        version: 4,
      }),
    ).toBe(`2\t1\tacme\\'s\t2024-05-01 12:00:01\t{"name":"Acme","size":10,"meta":{"tier":"gold"}}\t4\n`)
    expect(groupTypeLine(2, { groupType: 'org\nx', groupTypeIndex: 0, version: 1 })).toBe(
      `2\torg\\nx\t0\t1\n`,
    )
  })
})

describe('wide integers', () => {
  it('are written in exponent form, strings and 64-bit integers as they are', () => {
    const line = eventLine(
      row({
        properties: { wide: 2 ** 67, neg: -(2 ** 64), small: 2 ** 62, s: '147573952589676412928' },
      }),
    )
    expect(line.split('\t')[at('properties')]).toBe(
      '{"wide":1.4757395258967641e+20,"neg":-1.8446744073709552e+19,"small":4611686018427388000,' +
        '"s":"147573952589676412928"}',
    )
  })
})

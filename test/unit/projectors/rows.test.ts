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
// rules (backslash escapes for \\ \t \n \r \0 ' \b \f, in plain fields and in array strings alike),
// the JSON text of the property bags, and the key/value encoding of docs/projectors.md (strings as
// they are, other values as JSON, nulls left out, objects expanded three levels deep, paths joined
// by \x1F).

const US = '\x1F'
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
        '[]',
        '[]',
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
    const keys =
      `['s','n','b','arr','obj','obj${US}k','obj${US}deep','obj${US}deep${US}d2',` +
      `'obj${US}deep${US}d2${US}d3','we\\tird','ctl','u','__proto__','z','q']`
    const values =
      `['x','1.5','true','[1,"a"]','{"k":"v\\'","deep":{"d2":{"d3":{"d4":1}}}}','v\\'',` +
      `'{"d2":{"d3":{"d4":1}}}','{"d3":{"d4":1}}','{"d4":1}','line\\nbreak','\\0\\r\\b\\f\x01',` +
      `'é😀','p','0','say "hi" \\\\o/']`
    expect(line.split('\t')).toEqual([
      '2',
      '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
      "it\\'s\\ta\\nb",
      'back\\\\slash',
      '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c',
      '2024-05-01 12:00:00.123',
      json,
      keys,
      values,
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

  it('leaves out values JSON cannot hold and expands nested arrays only as JSON', () => {
    const line = eventLine(
      row({
        properties: { inf: Number.POSITIVE_INFINITY, list: [{ a: 1 }], o: { n: null, e: {} }, u: undefined },
        personProperties: { plan: 'pro' },
      }),
    )
    const f = line.split('\t')
    expect(f[at('properties')]).toBe('{"inf":null,"list":[{"a":1}],"o":{"n":null,"e":{}}}')
    expect(f[at('prop_keys')]).toBe(`['list','o','o${US}e']`)
    expect(f[at('prop_values')]).toBe(`['[{"a":1}]','{"n":null,"e":{}}','{}']`)
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
        `{"email":"o\\'neil@x.io","tags":["a"]}\t['email','tags']\t['o\\'neil@x.io','["a"]']\t1\t0\t5\n`,
    )
    expect(personLine(2, { ...person, properties: {}, isIdentified: false, version: 0 })).toBe(
      `2\t0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c\t2024-05-01 12:00:00.123\t{}\t[]\t[]\t0\t0\t0\n`,
    )
  })

  it('writes a deleted person with empty properties', () => {
    expect(deletedPersonLine(2, { id: person.id, createdAtMs: T0, version: 7 })).toBe(
      `2\t${person.id}\t2024-05-01 12:00:00.123\t{}\t[]\t[]\t0\t1\t7\n`,
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
    ).toBe(
      `2\t1\tacme\\'s\t2024-05-01 12:00:01\t{"name":"Acme","size":10,"meta":{"tier":"gold"}}\t` +
        `['name','size','meta','meta${US}tier']\t['Acme','10','{"tier":"gold"}','gold']\t4\n`,
    )
    expect(groupTypeLine(2, { groupType: 'org\nx', groupTypeIndex: 0, version: 1 })).toBe(
      `2\torg\\nx\t0\t1\n`,
    )
  })
})

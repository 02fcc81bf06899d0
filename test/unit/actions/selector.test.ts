import { describe, expect, it } from 'vitest'
import { InvalidSelector, parseSelector, selectorRegex, tagNameRegex } from '../../../src/actions/selector.ts'
import { regexFinds, regexProblem } from '../../../src/flags/regex.ts'
import { elementsChainFromArray } from '../../../src/projectors/elements.ts'
import { elementsToString, type PhElement } from './chain.ts'

// PostHog's selector cases (posthog/models/test/test_event_model.py: TestSelectors,
// TestSelectorRegexMatching and TestFilterByActions' selector steps), with PostHog's expected
// answers. Patterns are run with RE2, as ClickHouse's match() runs them.

const matches = (selector: string, elements: PhElement[]) =>
  regexFinds(selectorRegex(selector), elementsToString(elements))

describe('parsing selectors (PostHog TestSelectors)', () => {
  it('splits parts on spaces and > whatever the spacing', () => {
    for (const s of ['div > span > a', 'div span > a', 'div span a', 'div > span a']) {
      expect(parseSelector(s)).toHaveLength(3)
    }
  })

  it('reads a descendant and a direct child, the last part first', () => {
    expect(parseSelector('div span')).toEqual([
      { tag: 'span', classes: [], attributes: {}, direct: false },
      { tag: 'div', classes: [], attributes: {}, direct: false },
    ])
    expect(parseSelector('div > span').map((p) => [p.tag, p.direct])).toEqual([
      ['span', false],
      ['div', true],
    ])
  })

  it('reads attributes, ids, classes and nth-child', () => {
    expect(parseSelector('div[data-id="5"] > span')[1]).toEqual({
      tag: 'div',
      classes: [],
      attributes: { 'data-id': '5' },
      direct: true,
    })
    expect(parseSelector('[id="5"] > span')[1]!.attributes).toEqual({ attr_id: '5' })
    expect(parseSelector('  [data-id="foo bar]"]  ')[0]!.attributes).toEqual({ 'data-id': 'foo bar]' })
    expect(parseSelector('span    ')).toEqual([{ tag: 'span', classes: [], attributes: {}, direct: false }])
    expect(parseSelector('div.classone.classtwo > span')[1]).toEqual({
      tag: 'div',
      classes: ['classone', 'classtwo'],
      attributes: {},
      direct: true,
    })
    expect(parseSelector('div > span:nth-child(3)')[0]).toEqual({
      tag: 'span',
      classes: [],
      attributes: { 'nth-child': '3' },
      direct: false,
    })
  })

  it('drops * between parents and unescapes \\:', () => {
    expect(parseSelector('div > *').map((p) => p.tag)).toEqual(['div'])
    const middle = parseSelector('div > * > div')
    expect(middle.map((p) => [p.tag, p.direct])).toEqual([
      ['div', false],
      ['div', false],
    ])
    expect(parseSelector('div#root\\:id')[0]).toEqual({
      tag: 'div',
      classes: [],
      attributes: { attr_id: 'root:id' },
      direct: false,
    })
  })

  it('refuses what it cannot match, saying why', () => {
    for (const bad of [
      '',
      '   ',
      'a:hover',
      'div.nav:focus',
      'a[href^="/x"]',
      '[data-x="1"',
      'a >',
      'a ~ b',
    ]) {
      expect(() => selectorRegex(bad), bad).toThrow(InvalidSelector)
    }
  })
})

describe('matching chains (PostHog TestSelectorRegexMatching)', () => {
  const cases: [string, string, PhElement[], boolean][] = [
    [
      'a sibling class the selector does not name can carry any character',
      '.flex',
      [{ tag_name: 'div', attr_class: ['flex', 'w-1/2', '!mt-0', 'hover:bg-blue-500/75'] }],
      true,
    ],
    [
      'a target class can carry slashes and bangs',
      '.bg-yellow/50',
      [{ tag_name: 'div', attr_class: ['bg-yellow/50'] }],
      true,
    ],
    [
      'a tailwind arbitrary-value target class',
      '.max-w-[1045px]',
      [{ tag_name: 'div', attr_class: ['max-w-[1045px]'] }],
      true,
    ],
    [
      'an attribute value with a pre-escaped quote',
      'div[title="say \\"hi\\""]',
      [{ tag_name: 'div', attributes: { attr__title: 'say "hi"' } }],
      true,
    ],
    [
      'a single-quoted attribute value containing double quotes',
      'div[title=\'say "hi"\']',
      [{ tag_name: 'div', attributes: { attr__title: 'say "hi"' } }],
      true,
    ],
    [
      'a neighboring attribute value containing a quote',
      'div[title="hi"]',
      [{ tag_name: 'div', attributes: { 'attr__data-x': 'a"b', attr__title: 'hi' } }],
      true,
    ],
    [
      'a semicolon inside an attribute value stays inside the element',
      'input[type="text"]',
      [{ tag_name: 'input', attributes: { attr__style: 'display: flex; gap: 4px', attr__type: 'text' } }],
      true,
    ],
    [
      'attribute value mismatch',
      'div[title="hi"]',
      [{ tag_name: 'div', attributes: { attr__title: 'bye' } }],
      false,
    ],
    ['class not on the element', '.flex', [{ tag_name: 'div', attr_class: ['lex'] }], false],
    [
      'direct child combinator still matches parent and child',
      'a > b',
      [{ tag_name: 'b' }, { tag_name: 'a' }],
      true,
    ],
    [
      'descendant combinator still matches parent and child',
      'a b',
      [{ tag_name: 'b' }, { tag_name: 'a' }],
      true,
    ],
    [
      'direct child combinator does not match the reversed order',
      'a > b',
      [{ tag_name: 'a' }, { tag_name: 'b' }],
      false,
    ],
  ]
  it.each(cases)('%s', (_name, selector, elements, expected) => {
    expect(matches(selector, elements)).toBe(expected)
  })
})

// TestFilterByActions._setup_action_selector_events: three autocapture events
const EVENT1: PhElement[] = [
  { tag_name: 'a', href: '/a-url', nth_child: 1, nth_of_type: 0, attr_class: ['one-class'] },
  { tag_name: 'button', nth_child: 0, nth_of_type: 0 },
  { tag_name: 'div', nth_child: 0, nth_of_type: 0 },
  { tag_name: 'section', nth_child: 0, nth_of_type: 0, attr_id: 'nested' },
]
const EVENT2: PhElement[] = [
  { tag_name: 'a', nth_child: 2, nth_of_type: 0, attr_id: 'someId' },
  ...Array.from({ length: 6 }, () => ({ tag_name: 'div', nth_child: 0, nth_of_type: 0 })),
  { href: '/a-url-2', nth_child: 0, nth_of_type: 0 },
]
const EVENT3: PhElement[] = [
  { tag_name: 'a', nth_child: 3, nth_of_type: 0 },
  { tag_name: 'div', nth_child: 0, nth_of_type: 0 },
]
const EVENTS = [EVENT1, EVENT2, EVENT3]

/** Which of the three events a step of these selectors matches (the steps of one action are ORed). */
const matching = (...selectors: string[]) =>
  EVENTS.map((e, i) => (selectors.some((s) => matches(s, e)) ? i + 1 : 0)).filter((i) => i > 0)

describe('selectors of action steps (PostHog TestFilterByActions)', () => {
  it('direct descendants in order', () => {
    expect(matching('div > div > a', 'div > a.somethingthatdoesntexist')).toEqual([2])
  })
  it('nth-child', () => expect(matching('div > a:nth-child(2)')).toEqual([2]))
  it('an id', () => expect(matching("[id='someId']")).toEqual([2]))
  it('a descendant of an element with an id', () => expect(matching("[id='nested'] a")).toEqual([1]))
  it('any element inside a div', () => expect(matching('div *')).toEqual([1, 2, 3]))

  it('classes, whatever other classes the element has', () => {
    const withClass = [
      { tag_name: 'span', attr_class: null },
      { tag_name: 'a', attr_class: ['active', 'crazy-class', 'nav-link'] },
    ]
    const without = [
      { tag_name: 'span', attr_class: null },
      { tag_name: 'a', attr_class: null },
    ]
    expect(matches('a.nav-link.active', withClass)).toBe(true)
    expect(matches('a.nav-link.active', without)).toBe(false)
  })

  it('classes with escaped symbols and slashes, taken as written', () => {
    expect(
      matches('a.na\\v-link:b@ld', [
        { tag_name: 'span' },
        { tag_name: 'a', attr_class: ['na\\v-link:b@ld'] },
      ]),
    ).toBe(true)
    expect(
      matches('a.na\\\\\\v-link:b@ld', [
        { tag_name: 'span' },
        { tag_name: 'a', attr_class: ['na\\\\\\v-link:b@ld'] },
      ]),
    ).toBe(true)
  })

  it('a tag, not a class of that name', () => {
    expect(matches('input', [{ tag_name: 'span' }, { tag_name: 'input', attr_class: ['button'] }])).toBe(true)
    expect(matches('input', [{ tag_name: 'span' }, { tag_name: 'button', attr_class: ['input'] }])).toBe(
      false,
    )
  })

  it('attributes', () => {
    expect(matches('[data-id="123"]', [{ tag_name: 'button', attributes: { 'attr__data-id': '123' } }])).toBe(
      true,
    )
  })
})

describe('whole names only', () => {
  it('a tag or a class is never matched by its prefix', () => {
    expect(matches('a', [{ tag_name: 'abbr' }])).toBe(false)
    expect(matches('.nav', [{ tag_name: 'a', attr_class: ['navbar'] }])).toBe(false)
    expect(matches('[data-id="1"]', [{ tag_name: 'a', attributes: { 'attr__xdata-id': '1' } }])).toBe(false)
  })

  it('attributes written in another order (the ingestion sorts with localeCompare)', () => {
    const chain = 'button:attr__type="submit"attr__data-x="1"nth-child="0"nth-of-type="0"'
    expect(regexFinds(selectorRegex('button[data-x="1"][type="submit"]'), chain)).toBe(true)
  })

  it('chains as Burrow writes them from posthog-js elements', () => {
    const chain = elementsChainFromArray([
      {
        tag_name: 'button',
        $el_text: 'Sign up',
        attr__class: 'btn primary',
        attr__id: 'signup',
        nth_child: 2,
        nth_of_type: 1,
      },
      { tag_name: 'form', attr__class: 'auth', nth_child: 1, nth_of_type: 1 },
      { tag_name: 'body', nth_child: 2, nth_of_type: 1 },
    ])
    for (const s of [
      'button.btn.primary',
      '#signup',
      'form > button',
      'body button',
      'form.auth > button#signup:nth-child(2)',
    ]) {
      expect(regexFinds(selectorRegex(s), chain), s).toBe(true)
    }
    for (const s of ['body > button', 'button.secondary', 'form > button:nth-child(1)']) {
      expect(regexFinds(selectorRegex(s), chain), s).toBe(false)
    }
  })

  it('every pattern compiles with RE2', () => {
    for (const s of [
      'a',
      'div > *',
      'a[href="/x"][data-a="1"][data-b="2"][data-c="3"][data-d="4"]',
      '.x.y.z',
    ]) {
      expect(regexProblem(selectorRegex(s))).toBeNull()
    }
    expect(regexProblem(tagNameRegex('a'))).toBeNull()
  })
})

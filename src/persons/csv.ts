// CSV for person exports (RFC 4180): a header row, fields quoted when they hold a comma, quote or
// line break, quotes doubled, CRLF line ends. Properties travel as one JSON column so the header can be
// written before the first person is read, which is what lets large exports stream.
import type { PersonResponse } from '../queries/insights/actors/persons.ts'

export const CSV_COLUMNS = ['id', 'uuid', 'name', 'distinct_ids', 'created_at', 'is_identified', 'properties']

export function csvField(value: unknown): string {
  const text =
    value === null || value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value)
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text
}

export const csvLine = (fields: unknown[]) => `${fields.map(csvField).join(',')}\r\n`

export function personCsvLine(p: PersonResponse): string {
  return csvLine([
    p.id,
    p.uuid,
    p.name,
    p.distinct_ids.join(', '),
    p.created_at,
    p.is_identified ? 'true' : 'false',
    JSON.stringify(p.properties),
  ])
}

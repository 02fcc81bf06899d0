import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Logger } from '../observability/logger.ts'
import { type ClickHouseClient, clickhouseClient } from './client.ts'
import { sqlString } from './sql.ts'

export const SCHEMA_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'schema', 'clickhouse')

export interface Migration {
  version: string
  statements: string[]
}

/** Each file `NNNN_name.sql` is one version; statements end with `;` at the end of a line. */
export function loadMigrations(dir = SCHEMA_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f))
    .sort()
    .map((f) => {
      const text = readFileSync(join(dir, f), 'utf8')
        .split('\n')
        .filter((l) => !l.trimStart().startsWith('--'))
        .join('\n')
      const statements = text
        .split(/;\s*$/m)
        .map((s) => s.trim())
        .filter(Boolean)
      return { version: f.replace(/\.sql$/, ''), statements }
    })
}

/**
 * The current CREATE TABLE statement of `table` in the schema files (the last one naming it), or
 * undefined. A table's statement is edited in place when its layout changes (the migration that
 * first created it has run already where data exists): `burrow replay` builds from it (replay.ts).
 */
export function tableDdl(table: string, dir = SCHEMA_DIR): string | undefined {
  const head = new RegExp(`^CREATE TABLE IF NOT EXISTS ${table} \\(`)
  return loadMigrations(dir)
    .flatMap((m) => m.statements)
    .filter((s) => head.test(s))
    .at(-1)
}

/** The stored columns a CREATE TABLE statement defines, in order (MATERIALIZED and ALIAS ones left out). */
export function ddlColumns(ddl: string): string[] {
  const body = ddl.slice(ddl.indexOf('(') + 1, ddl.search(/\)\s*ENGINE/))
  return body
    .split(',\n')
    .map((line) => /^\s*`?([^`\s]+)`?\s+(.*)$/s.exec(line))
    .filter((m): m is RegExpExecArray => m !== null && !/\b(MATERIALIZED|ALIAS)\b/.test(m[2]!))
    .map((m) => m[1]!)
}

/** Applies the migrations in `dir` not yet recorded in `database`.schema_migrations, in order. */
export async function migrateClickHouse(
  url: string,
  database: string,
  log?: Logger,
  dir = SCHEMA_DIR,
): Promise<{ applied: string[]; client: ClickHouseClient }> {
  const admin = clickhouseClient(url)
  try {
    await admin.command({ query: `CREATE DATABASE IF NOT EXISTS ${database}` })
  } finally {
    await admin.close()
  }
  const client = clickhouseClient(url, database)
  const migrations = loadMigrations(dir)
  const [bootstrap] = migrations
  if (bootstrap) for (const s of bootstrap.statements) await client.command({ query: s })
  const rs = await client.query({
    query: 'SELECT DISTINCT version FROM schema_migrations',
    format: 'JSONEachRow',
  })
  const done = new Set((await rs.json<{ version: string }>()).map((r) => r.version))
  const applied: string[] = []
  for (const m of migrations) {
    if (done.has(m.version)) continue
    // Statements are idempotent (IF NOT EXISTS), so a crash between them and the record is harmless.
    for (const s of m.statements) await client.command({ query: s })
    await client.command({
      query: `INSERT INTO schema_migrations (version, applied_at) SELECT ${sqlString(m.version)}, now()`,
    })
    applied.push(m.version)
    log?.info({ version: m.version }, 'applied clickhouse migration')
  }
  return { applied, client }
}

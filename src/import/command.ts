import { readFileSync } from 'node:fs'
import { CredentialsSchema, credentialsFile } from '../accounts/bootstrap.ts'
import { type ImportFormat, type ImportSummary, runImport } from './index.ts'
import { formatBytes, formatDuration, progressPrinter } from './progress.ts'

// `burrow import`: where to send (flags, else the local Burrow and its credentials), the progress
// line on stderr and the summary on stdout.

export interface ImportArgs {
  format?: string
  url?: string
  token?: string
  batchSize?: string
  restart?: boolean
  rejected?: string
}

export interface ImportEnv {
  dataDir: string
  port: number
}

/** The capture URL and project API key: flags first, then BURROW_URL, then the local Burrow. */
export function importTarget(args: ImportArgs, env: ImportEnv): { url: string; token: string } {
  const url = args.url ?? process.env.BURROW_URL ?? `http://127.0.0.1:${env.port}`
  let token = args.token
  if (!token) {
    const file = credentialsFile(env.dataDir)
    try {
      token = CredentialsSchema.parse(JSON.parse(readFileSync(file, 'utf8'))).project_api_key
    } catch {
      throw new Error(`no --token given and no project API key in ${file} (run \`burrow start\` once)`)
    }
  }
  return { url, token }
}

export function formatSummary(s: ImportSummary): string {
  if (s.alreadyDone) {
    return `${s.input} was already imported completely (${s.checkpointFile}); use --restart to import it again`
  }
  const out = [
    `${s.complete ? 'imported' : 'stopped importing'} ${s.input} (${s.format})` +
      (s.resumed ? `, resumed at byte ${s.fromOffset}` : ''),
    `  lines ${s.lines.toLocaleString('en-US')}, events ${s.events.toLocaleString('en-US')}, ` +
      `rejected ${s.rejected.toLocaleString('en-US')}`,
    `  this run: ${formatDuration(s.seconds)}, ${s.eventsPerSecond.toLocaleString('en-US')} events/s` +
      (s.size !== undefined ? `, ${formatBytes(s.offset)} of ${formatBytes(s.size)}` : ''),
  ]
  const reasons = Object.entries(s.reasons).sort((a, b) => b[1] - a[1])
  if (reasons.length > 0) {
    out.push(`  rejected this run: ${reasons.map(([r, n]) => `${r} (${n})`).join(', ')}`)
  }
  if (s.rejected > 0) out.push(`  rejected lines with reasons: ${s.rejectedFile}`)
  if (s.stoppedBy) out.push(`  stopped at ${s.stoppedBy}`)
  if (!s.complete && s.checkpointFile)
    out.push(`  run the same command again to resume (${s.checkpointFile})`)
  return out.join('\n')
}

/** Runs the command; the exit code is 0 when the input was imported completely, else 3. */
export async function importCommand(input: string, args: ImportArgs, env: ImportEnv): Promise<number> {
  const format = args.format as ImportFormat | undefined
  if (format !== undefined && format !== 'jsonl' && format !== 'csv') {
    throw new Error(`--format must be jsonl or csv, not ${format}`)
  }
  const batchSize = args.batchSize === undefined ? undefined : Number(args.batchSize)
  if (batchSize !== undefined && (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 100_000)) {
    throw new Error('--batch-size must be an integer from 1 to 100000')
  }
  const { url, token } = importTarget(args, env)
  const summary = await runImport({
    input,
    format,
    url,
    token,
    batchSize,
    restart: args.restart,
    rejectedFile: args.rejected,
    progress: progressPrinter(process.stderr),
    sender: {
      onRetry: ({ attempt, waitMs, reason }) =>
        process.stderr.write(`\nimport: attempt ${attempt} failed (${reason}); retrying in ${waitMs} ms\n`),
    },
  })
  console.log(formatSummary(summary))
  return summary.complete ? 0 : 3
}

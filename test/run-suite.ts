// `npm test`'s last step: the vitest projects in lanes that run at the same time, one vitest process
// each. Why: within a project the files run one at a time (they share that project's servers, and
// some swap tables), and one vitest process runs every project's files in one queue, so the suite
// used one core of two. The lanes below have their own servers (each project's globalSetup starts
// them), so they cannot disturb each other; they are balanced by the files' run times in CI.
// Each lane's lines are printed as they come, prefixed with the lane's name; the exit code is the
// first failing lane's, or 0.
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'

/**
 * The lanes, each a list of vitest projects (vitest.config.ts) run in one process. The second
 * build's integration files are a lane of their own: in one process with the first build's they
 * would queue behind them, and the run would last two integration lanes instead of one and a half
 * (three CPU-bound lanes on two cores; docs/performance.md, "The test suite").
 */
export const LANES: Record<string, string[]> = {
  '26.7': ['clickhouse-26.7'],
  '26.7.0': ['clickhouse-26.7.0'],
  system: ['unit', 'system', 'scale'],
}

const VITEST = new URL('../node_modules/vitest/vitest.mjs', import.meta.url).pathname

function runLane(name: string, projects: string[]): Promise<{ name: string; code: number; seconds: number }> {
  const started = Date.now()
  const args = [VITEST, 'run', ...projects.flatMap((p) => ['--project', p]), ...process.argv.slice(2)]
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  const prefix = `[${name}] `
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => process.stdout.write(`${prefix}${line}\n`))
  }
  return new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      resolve({ name, code: code ?? (signal ? 1 : 0), seconds: Math.round((Date.now() - started) / 1000) })
    })
  })
}

const only = process.env.BURROW_TEST_LANES?.split(',')
const results = await Promise.all(
  Object.entries(LANES)
    .filter(([name]) => !only || only.includes(name))
    .map(([name, projects]) => runLane(name, projects)),
)
for (const r of results)
  console.log(`lane ${r.name}: ${r.code === 0 ? 'passed' : `failed (exit ${r.code})`} in ${r.seconds} s`)
process.exit(results.find((r) => r.code !== 0)?.code ?? 0)

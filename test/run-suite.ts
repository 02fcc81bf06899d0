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
 * The lanes: each a list of vitest runs (each a list of projects of vitest.config.ts in one process)
 * made one after another. The second build's part of the integration files (vitest.config.ts
 * SECOND_BUILD_FILES, ~5 min) runs after the system lane's projects, which evens the two lanes
 * (~14 min each in CI); in a process of its own, so it never runs beside the abuse files' timing
 * probes, and so does the stalls file on that build after it. A third CPU-bound lane on two cores would make the run ~1.5 times as long
 * (docs/performance.md, "The test suite").
 */
export const LANES: Record<string, string[][]> = {
  '26.7': [['clickhouse-26.7']],
  system: [['unit', 'system', 'scale'], ['clickhouse-26.7.0'], ['abuse-26.7.0']],
}

const VITEST = new URL('../node_modules/vitest/vitest.mjs', import.meta.url).pathname

/** One vitest process of a lane; its exit code (1 for a signal). */
function runVitest(name: string, projects: string[]): Promise<number> {
  const args = [VITEST, 'run', ...projects.flatMap((p) => ['--project', p]), ...process.argv.slice(2)]
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  const prefix = `[${name}] `
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => process.stdout.write(`${prefix}${line}\n`))
  }
  return new Promise((resolve) => {
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)))
  })
}

/** A lane's runs in order; every run is made even when one before it failed (all failures show). */
async function runLane(
  name: string,
  runs: string[][],
): Promise<{ name: string; code: number; seconds: number }> {
  const started = Date.now()
  let code = 0
  for (const projects of runs) {
    const c = await runVitest(name, projects)
    if (code === 0) code = c
  }
  return { name, code, seconds: Math.round((Date.now() - started) / 1000) }
}

const only = process.env.BURROW_TEST_LANES?.split(',')
const results = await Promise.all(
  Object.entries(LANES)
    .filter(([name]) => !only || only.includes(name))
    .map(([name, runs]) => runLane(name, runs)),
)
for (const r of results)
  console.log(`lane ${r.name}: ${r.code === 0 ? 'passed' : `failed (exit ${r.code})`} in ${r.seconds} s`)
process.exit(results.find((r) => r.code !== 0)?.code ?? 0)

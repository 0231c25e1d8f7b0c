/**
 * `npm run bench:gate` (`--quick` for shorter rounds; `--cpu-prof` for where the check's CPU goes): compiles the library, the gate and
 * the benchmark to plain JavaScript (see `build.ts`), then runs `gate-main.ts` with Node.
 *
 * @module
 */
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { buildForBenchmark, ROOT } from './build.js'

const buildDir = buildForBenchmark()
// `--cpu-prof`: the check under the profiler instead (gate-cpu-profile.ts).
const script = process.argv.includes('--cpu-prof') ? 'gate-cpu-profile.js' : 'gate-main.js'
const child = spawn(process.execPath, [join(buildDir, 'bench', script), ...process.argv.slice(2)], {
  stdio: 'inherit',
  env: { ...process.env, VOOT_GATE_EXAMPLES: join(ROOT, 'examples', 'gate') },
})
const forward = (signal: NodeJS.Signals): void => void child.kill(signal)
process.once('SIGINT', forward)
process.once('SIGTERM', forward)
child.once('exit', (code, signal) => {
  process.exitCode = code ?? (signal === null ? 1 : 128)
})

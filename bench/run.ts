/**
 * `npm run bench` / `npm run bench:quick` (and `npm run bench:profile`, with
 * `--cpu-profile`): compiles the library and the suite to plain
 * JavaScript (see `build.ts` for why), then runs the suite with plain Node.
 *
 * @module
 */
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { buildForBenchmark } from './build.js'

const buildDir = buildForBenchmark()
const entry = process.argv.includes('--cpu-profile') ? 'cpu-profile.js' : 'main.js'
const child = spawn(process.execPath, [join(buildDir, 'bench', entry), ...process.argv.slice(2)], { stdio: 'inherit' })
const forward = (signal: NodeJS.Signals): void => void child.kill(signal)
process.once('SIGINT', forward)
process.once('SIGTERM', forward)
child.once('exit', (code, signal) => {
  process.exitCode = code ?? (signal === null ? 1 : 128)
})

/**
 * `npm run bench` / `npm run bench:quick`: compiles the library and the suite to plain
 * JavaScript (see `build.ts` for why), then runs the suite with plain Node.
 *
 * @module
 */
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { buildForBenchmark } from './build.js'

const buildDir = buildForBenchmark()
const child = spawn(process.execPath, [join(buildDir, 'bench', 'main.js'), ...process.argv.slice(2)], { stdio: 'inherit' })
const forward = (signal: NodeJS.Signals): void => void child.kill(signal)
process.once('SIGINT', forward)
process.once('SIGTERM', forward)
child.once('exit', (code, signal) => {
  process.exitCode = code ?? (signal === null ? 1 : 128)
})

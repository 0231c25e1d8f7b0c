// Times the cache-key digest candidates in each runtime (docs/runtimes.md, BENCHMARKS.md):
// `node bench/digest-runtimes/run.mjs`, after `npm ci --prefix test/runtimes` and
// `bash scripts/node-binary.sh 22` (miniflare runs on Node 22). Prints ns per digest.
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const here = import.meta.dirname
const root = join(here, '..', '..')
const tools = join(root, 'test', 'runtimes', 'node_modules')
const node22 = execFileSync('bash', [join(root, 'scripts', 'node-binary.sh'), '22'], { encoding: 'utf8' }).trim()
const scratch = mkdtempSync(join(tmpdir(), 'voot-guard-digest-'))
try {
  mkdirSync(join(scratch, 'node_modules', '@noble'), { recursive: true })
  symlinkSync(join(root, 'node_modules', '@noble', 'hashes'), join(scratch, 'node_modules', '@noble', 'hashes'), 'dir')
  writeFileSync(
    join(scratch, 'cli.js'),
    `import { measure } from '${join(here, 'measure.js')}'\nconsole.log(JSON.stringify(await measure()))\n`,
  )
  writeFileSync(
    join(scratch, 'worker.js'),
    `import { measure } from '${join(here, 'measure.js')}'\nexport default { fetch: async () => Response.json(await measure()) }\n`,
  )
  const { build } = await import(join(tools, 'esbuild', 'lib', 'main.js'))
  for (const name of ['cli', 'worker']) {
    await build({
      entryPoints: [join(scratch, `${name}.js`)],
      outfile: join(scratch, `${name}.bundle.js`),
      bundle: true,
      platform: 'neutral',
      format: 'esm',
      mainFields: ['module', 'main'],
      nodePaths: [join(scratch, 'node_modules')],
      logLevel: 'error',
    })
  }
  const cli = join(scratch, 'cli.bundle.js')
  const print = (runtime, output) => console.log(`${runtime.padEnd(26)} ${output.trim()}`)
  print(`node ${process.version}`, execFileSync(process.execPath, [cli], { encoding: 'utf8' }))
  const deno = join(tools, '.bin', 'deno')
  print(
    `deno ${execFileSync(deno, ['--version'], { encoding: 'utf8' }).split(' ')[1]}`,
    execFileSync(deno, ['run', '--no-lock', cli], { encoding: 'utf8' }),
  )
  const bun = join(tools, 'bun', 'bin', 'bun.exe')
  print(`bun ${execFileSync(bun, ['--version'], { encoding: 'utf8' }).trim()}`, execFileSync(bun, [cli], { encoding: 'utf8' }))
  const workerd = `
    import { Miniflare } from '${join(tools, 'miniflare', 'dist', 'src', 'index.js')}'
    for (const flags of [[], ['nodejs_compat']]) {
      const mf = new Miniflare({ modules: true, scriptPath: '${join(scratch, 'worker.bundle.js')}', modulesRoot: '${scratch}', compatibilityDate: '2026-07-01', compatibilityFlags: flags })
      console.log(('workerd ' + (flags[0] ?? 'no flag')).padEnd(26), await (await mf.dispatchFetch('http://localhost/')).text())
      await mf.dispose()
    }`
  process.stdout.write(execFileSync(node22, ['--input-type=module', '-e', workerd], { encoding: 'utf8' }))
} finally {
  rmSync(scratch, { recursive: true, force: true })
}

// The package as its users meet it: `npm pack` (the `prepack` script builds), then the
// tarball installed into scratch projects in a temp dir, one per way of consuming it:
//
//   esm            plain JavaScript, `import` (type-checked with checkJs, module nodenext)
//   cjs            plain JavaScript, `require()` (Node >= 20.19 loads ESM that way)
//   ts-nodenext    TypeScript, `module: nodenext`, compiled with tsc
//   ts-nodenext-cjs  the same in a CommonJS project (`require()` of the ESM package)
//   ts-node10      TypeScript, `module: commonjs` + `moduleResolution: node10` (no `exports`)
//
// Each project type-checks a guarded Express route (`req.voot` must be typed: an unknown
// property on it is an expected error), runs it against the built-in emulator, and prints
// the statuses it got; they must be 200 (alice, an employee), 403 (bob) and 401 (no token).
// Last, `npx voot-guard gate --config gate.yaml --check` runs in the install, as docs/gate.md
// shows it.
//
//   node scripts/check-consumers.mjs [--keep]   (--keep leaves the temp dir for a look)
import { execFileSync } from 'node:child_process'
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const root = new URL('..', import.meta.url).pathname
const keep = process.argv.includes('--keep')
const EXPECTED = '{"alice":200,"bob":403,"none":401}'

/** Versions of the consumers' own tools, as installed in this repo (so the npm cache has them). */
async function installedVersion(name) {
  const pkg = JSON.parse(await readFile(join(root, 'node_modules', name, 'package.json'), 'utf8'))
  return `${name}@${pkg.version}`
}

function run(command, args, cwd) {
  return execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
}

// The route and the requests, the same in every project; `IMPORTS` is each project's own.
const body = (typed) => `
async function main()${typed ? ': Promise<void>' : ''} {
  const emulator = await startEmulator()
  const guard = createGuard({ baseUrl: emulator.baseUrl, realm: 'consumer' })
  const app = express()
  app.get('/staff', guard.requireGroup('fc:org:example.org', 'admin'), (req, res) => {
    // @ts-expect-error req.voot is typed, so a property it does not have is an error
    void req.voot?.notAProperty
    const allowed${typed ? ': boolean' : ''} = req.voot?.decision.allowed ?? false
    res.json({ allowed })
  })
  const server = app.listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  const address = server.address()
  const url = \`http://127.0.0.1:\${typeof address === 'object' && address !== null ? address.port : 0}/staff\`
  ${typed ? '' : '/** @param {string} [token] */\n  '}const statusFor = async (token${typed ? '?: string' : ''}) =>
    (await fetch(url, token === undefined ? {} : { headers: { authorization: \`Bearer \${token}\` } })).status
  const statuses = {
    alice: await statusFor(emulator.issueToken('alice')),
    bob: await statusFor(emulator.issueToken('bob')),
    none: await statusFor(),
  }
  console.log(JSON.stringify(statuses))
  server.close()
  await emulator.close()
}
main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
`

const ESM_IMPORTS = `import express from 'express'
import { createGuard } from 'voot-guard/express'
import { startEmulator } from 'voot-guard/testing'
`
const CJS_IMPORTS = `const express = require('express')
const { createGuard } = require('voot-guard/express')
const { startEmulator } = require('voot-guard/testing')
`
const strict = { strict: true, skipLibCheck: false, types: ['node'], target: 'ES2022', lib: ['ES2023'] }
const checkJs = { ...strict, allowJs: true, checkJs: true, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext' }

const projects = [
  {
    name: 'esm',
    type: 'module',
    file: 'app.mjs',
    source: `// @ts-check\n${ESM_IMPORTS}${body(false)}`,
    compilerOptions: checkJs,
    run: 'app.mjs',
  },
  {
    name: 'cjs',
    type: 'commonjs',
    file: 'app.cjs',
    source: `// @ts-check\n${CJS_IMPORTS}${body(false)}`,
    compilerOptions: checkJs,
    run: 'app.cjs',
  },
  {
    name: 'ts-nodenext',
    type: 'module',
    file: 'app.ts',
    source: `${ESM_IMPORTS}${body(true)}`,
    compilerOptions: { ...strict, module: 'nodenext', moduleResolution: 'nodenext', outDir: 'out' },
    run: 'out/app.js',
  },
  {
    // A CommonJS TypeScript project on nodenext: tsc (5.8+) lets it require() the ESM package.
    name: 'ts-nodenext-cjs',
    type: 'commonjs',
    file: 'app.ts',
    source: `${ESM_IMPORTS}${body(true)}`,
    compilerOptions: { ...strict, module: 'nodenext', moduleResolution: 'nodenext', outDir: 'out' },
    run: 'out/app.js',
  },
  {
    name: 'ts-node10',
    type: 'commonjs',
    file: 'app.ts',
    source: `${ESM_IMPORTS}${body(true)}`,
    compilerOptions: { ...strict, module: 'commonjs', moduleResolution: 'node10', esModuleInterop: true, outDir: 'out' },
    run: 'out/app.js',
  },
]

const scratch = await mkdtemp(join(tmpdir(), 'voot-guard-consumers-'))
let failed = false
try {
  // One install for all projects: they sit in subfolders and find node_modules above them.
  const packed = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', scratch], root))
  const tarball = join(scratch, packed[0].filename)
  console.log(`packed ${packed[0].filename} (${packed[0].entryCount} files, ${packed[0].size} bytes)`)
  await writeFile(join(scratch, 'package.json'), JSON.stringify({ name: 'scratch', private: true }))
  const tools = await Promise.all(['express', '@types/express', '@types/node', 'typescript'].map(installedVersion))
  run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', tarball, ...tools], scratch)
  const tsc = join(scratch, 'node_modules', 'typescript', 'bin', 'tsc')

  for (const project of projects) {
    const dir = join(scratch, project.name)
    await mkdir(dir)
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name: project.name, private: true, type: project.type }))
    await writeFile(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: project.compilerOptions, files: [project.file] }))
    await writeFile(join(dir, project.file), project.source)
    try {
      run(process.execPath, [tsc, '-p', 'tsconfig.json'], dir)
      const output = run(process.execPath, [project.run], dir).trim()
      if (output !== EXPECTED) throw new Error(`got ${output}, expected ${EXPECTED}`)
      console.log(`${project.name}: types ok, guarded route ${output}`)
    } catch (error) {
      failed = true
      console.error(`${project.name}: FAILED\n${error.stdout ?? ''}${error.stderr ?? ''}${error.stdout === undefined ? error.message : ''}`)
    }
  }

  // The command as docs/gate.md's "Run it" shows it where the package is installed:
  // `npx voot-guard` (the package's bin, linked by the install), on the try-it configuration.
  try {
    await writeFile(join(scratch, 'gate.yaml'), await readFile(join(root, 'examples/gate/emulator.yaml'), 'utf8'))
    const output = run('npx', ['voot-guard', 'gate', '--config', 'gate.yaml', '--check'], scratch).trim()
    if (output !== 'gate.yaml: the configuration is valid; no policy tests') throw new Error(`got ${output}`)
    console.log(`npx voot-guard gate --config gate.yaml --check: ${output}`)
  } catch (error) {
    failed = true
    console.error(`npx voot-guard: FAILED\n${error.stdout ?? ''}${error.stderr ?? ''}${error.stdout === undefined ? error.message : ''}`)
  }
} finally {
  if (keep) console.log(`scratch projects kept in ${scratch}`)
  else await rm(scratch, { recursive: true, force: true })
}
process.exitCode = failed ? 1 : 0

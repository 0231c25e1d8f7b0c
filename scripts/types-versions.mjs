// TypeScript's older `node10` resolution (`moduleResolution: node`, the default of
// `module: commonjs`) ignores `exports`: it finds a package's types through `types` and a
// subpath's through `typesVersions`. Both are derived here from `exports`, the one list of
// entry points, so a new subpath is one entry in `exports`:
//
//   node scripts/types-versions.mjs          check that package.json agrees (CI)
//   node scripts/types-versions.mjs --write  rewrite `main`, `types` and `typesVersions`
import { readFile, writeFile } from 'node:fs/promises'

const file = new URL('../package.json', import.meta.url)
const text = await readFile(file, 'utf8')
const pkg = JSON.parse(text)

/** The fields node10 consumers need, computed from `exports`. */
function legacyFields(exports) {
  const root = exports['.']
  const map = {}
  for (const [subpath, entry] of Object.entries(exports)) {
    if (subpath === '.' || typeof entry !== 'object' || entry.types === undefined) continue
    map[subpath.slice('./'.length)] = [entry.types]
  }
  return { main: root.default, types: root.types, typesVersions: { '*': map } }
}

const wanted = legacyFields(pkg.exports)
const differs = Object.entries(wanted).filter(([key, value]) => JSON.stringify(pkg[key]) !== JSON.stringify(value))

if (process.argv.includes('--write')) {
  // Insert missing fields right after `exports`, keeping the order of everything else.
  const next = {}
  for (const [key, value] of Object.entries(pkg)) {
    if (key in wanted) continue
    next[key] = value
    if (key === 'exports') Object.assign(next, wanted)
  }
  await writeFile(file, `${JSON.stringify(next, null, 2)}\n`)
  console.log(
    differs.length === 0 ? 'package.json: already in step with exports' : `package.json: rewrote ${differs.map(([k]) => k).join(', ')}`,
  )
} else if (differs.length > 0) {
  console.error(
    `package.json: ${differs.map(([k]) => k).join(', ')} out of step with exports; run: node scripts/types-versions.mjs --write`,
  )
  process.exitCode = 1
} else {
  console.log('package.json: main, types and typesVersions agree with exports')
}

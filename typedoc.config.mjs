// TypeDoc configuration for `npm run docs`: an API reference of every public entry point.
// The entry points are read from package.json `exports` (each subpath's `types` file, mapped
// back to its TypeScript source), so a new subpath needs no change here.
import { readFileSync } from 'node:fs'

const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'))

/** `./dist/adapters/express/index.d.ts` -> `./adapters/express/index.ts` */
const sourceOf = (types) => types.replace(/^\.\/dist\//, './').replace(/\.d\.ts$/, '.ts')

export const subpaths = Object.fromEntries(
  Object.entries(pkg.exports)
    .filter(([, entry]) => typeof entry === 'object' && entry.types !== undefined)
    .map(([subpath, entry]) => [sourceOf(entry.types), subpath.replace(/^\./, pkg.name)]),
)

/** @type {Partial<import('typedoc').TypeDocOptions>} */
export default {
  name: pkg.name,
  entryPoints: Object.keys(subpaths),
  tsconfig: './tsconfig.build.json',
  out: './docs-api',
  readme: 'none',
  excludePrivate: true,
  excludeInternal: true,
  // Source links point at the public repository, whatever remote (or none) the checkout has:
  // CI runs in a fresh clone whose remote is not the public one.
  disableGit: true,
  sourceLinkTemplate: 'https://github.com/voot-guard/voot-guard/blob/main/{path}#L{line}',
  // Broken {@link}s, unexported types that the API exposes and unknown tags all fail the build.
  treatWarningsAsErrors: true,
  validation: { notExported: true, invalidLink: true, rewrittenLink: true, notDocumented: false, unusedMergeModuleWith: true },
  plugin: ['./scripts/typedoc-subpath-names.mjs'],
}

/**
 * How a person runs the `voot-guard` command, for the commands the CLI, the emulator and
 * the demo print: a printed command must work when pasted where the reader is.
 *
 * @module
 */

/** In a clone of the repository (the package.json script `cli`, from source). */
export const CLONE_INVOCATION = 'npm run cli --'

/** Where the package is installed (its `bin`). */
export const INSTALLED_INVOCATION = 'npx voot-guard'

/**
 * The invocation that fits the executable at `moduleUrl`: the TypeScript source
 * (`bin/voot-guard.ts`) runs only in a clone; the built `.js` where the package is installed.
 *
 * @example
 * ```ts
 * invocationOf(import.meta.url) // 'npm run cli --' in a clone
 * ```
 */
export function invocationOf(moduleUrl: string): string {
  return moduleUrl.endsWith('.ts') ? CLONE_INVOCATION : INSTALLED_INVOCATION
}

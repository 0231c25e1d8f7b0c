/**
 * The emulator's internal face: `voot-guard/testing` and, beside it, what the `voot-guard
 * emulator` command needs of its insides (reading a data file again when it changes). Not
 * in package.json `exports`.
 *
 * @internal
 * @module
 */
export * from './index.js'
export { watchDataFile } from './data/data-watch.js'

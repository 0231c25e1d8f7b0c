/**
 * Loading an emulator data set from a JSON file.
 *
 * @module
 */
import { readFile } from 'node:fs/promises'
import { InvalidArgumentError } from '../../src/index.js'
import { validateEmulatorData, type EmulatorData } from './data.js'

/**
 * Reads, parses and validates a JSON data file. Every error message starts with the file's
 * path and, for invalid data, names the bad field.
 *
 * @throws {@link voot-guard!InvalidArgumentError} when the file cannot be read, is not JSON, or is not a valid data set.
 * @example
 * ```ts
 * const data = await loadEmulatorData('./test/fixtures/groups.json')
 * const emulator = await startEmulator({ data })
 * ```
 */
export async function loadEmulatorData(path: string): Promise<EmulatorData> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (err) {
    throw new InvalidArgumentError(`${path}: cannot read the data file (${(err as NodeJS.ErrnoException).code ?? 'error'})`, { cause: err })
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (err) {
    throw new InvalidArgumentError(`${path}: not valid JSON (${(err as Error).message})`, { cause: err })
  }
  try {
    return validateEmulatorData(parsed)
  } catch (err) {
    throw new InvalidArgumentError(`${path}: ${(err as Error).message}`, { cause: err })
  }
}

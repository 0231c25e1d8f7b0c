/**
 * Loading an emulator data set from a JSON file.
 *
 * @module
 */
import { readFile } from 'node:fs/promises'
import { LineCounter, parseDocument } from 'yaml'
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
    const message = (err as Error).message
    const position = /at position (\d+)/.exec(message)
    const where = position === null ? '' : `:${lineAndColumn(text, Number(position[1]))}`
    throw new InvalidArgumentError(`${path}${where}: not valid JSON (${message})`, { cause: err })
  }
  try {
    return validateEmulatorData(parsed)
  } catch (err) {
    const message = (err as Error).message
    const line = lineOfKey(text, message.slice(0, message.indexOf(':')))
    throw new InvalidArgumentError(`${path}${line === undefined ? '' : `:${line}`}: ${message}`, { cause: err })
  }
}

/** `line:column` (from 1) of a character offset. */
function lineAndColumn(text: string, offset: number): string {
  const before = text.slice(0, offset).split('\n')
  return `${before.length}:${(before.at(-1)?.length ?? 0) + 1}`
}

/**
 * The line (from 1) of the value at a path such as `users[2].memberships[0].groupId` in a
 * JSON text (read as YAML, whose parser keeps positions), or of its nearest parent found.
 */
function lineOfKey(text: string, path: string): number | undefined {
  const segments = [...path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)].map((match) =>
    match[2] === undefined ? (match[1] as string) : Number(match[2]),
  )
  const lines = new LineCounter()
  const doc = parseDocument(text, { lineCounter: lines })
  for (let length = segments.length; length > 0; length--) {
    const node = doc.getIn(segments.slice(0, length), true) as { range?: [number, number, number] } | undefined
    if (node?.range !== undefined) return lines.linePos(node.range[0]).line
  }
  return undefined
}

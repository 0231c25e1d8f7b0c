/**
 * The readers of a configuration's values (a mapping, a string, a list, a duration), each
 * adding what is wrong to the problem list at the value's own path and returning what it
 * could read. Shared by the readers of every section.
 *
 * @module
 */
import { nearestKey } from '../../src/internal.js'
import { parseDuration } from './duration.js'
import { formatConfigPath, type GateConfigPath, type ProblemList } from './problem.js'

type Path = GateConfigPath
/** A mapping of the configuration. */
export type Obj = Record<string, unknown>

/** Whether `value` is a mapping (not a list, not null). */
export function isObject(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The keys a mapping may have, and where keys of its children belong when written in it (see {@link belongsUnder}). */
export interface KnownKeys {
  readonly keys: readonly string[]
  readonly moved: Readonly<Record<string, Path>>
}

function isKnownKeys(known: readonly string[] | KnownKeys): known is KnownKeys {
  return !Array.isArray(known)
}

/**
 * Refuses the keys of `value` that are not in `known`, with a suggestion: where the key
 * belongs when `known.moved` says (a key one level too high, an indentation slip), else the
 * nearest known key (a misspelling).
 */
export function keysOf(problems: ProblemList, path: Path, value: Obj, known: readonly string[] | KnownKeys): void {
  // A list's own `keys` is a method: tell the two shapes apart by what a list is.
  const keys: readonly string[] = isKnownKeys(known) ? known.keys : known
  const moved = isKnownKeys(known) ? known.moved : {}
  for (const key of Object.keys(value)) {
    if (keys.includes(key)) continue
    const home = Object.hasOwn(moved, key) ? moved[key] : undefined
    if (home === undefined) problems.add([...path, key], 'unknown key', nearestKey(key, keys))
    else problems.add([...path, key], `unknown key here: it belongs under "${String(home.at(-2))}"`, formatConfigPath(home))
  }
}

/**
 * Where each of `keys` belongs when it is written beside `child` instead of inside it
 * (`role` beside a rule's `require`, `cache` at the top instead of in `service`): for
 * {@link keysOf}'s suggestion. `at` is the path of `child`.
 *
 * @example
 * ```ts
 * belongsUnder(['rules', 0, 'require'], ['role']) // { role: ['rules', 0, 'require', 'role'] }
 * ```
 */
export function belongsUnder(at: Path, keys: readonly string[]): Record<string, Path> {
  return Object.fromEntries(keys.map((key) => [key, [...at, key]]))
}

/** The mapping at `path`; a problem when it is required and absent, or not a mapping. */
export function objectAt(problems: ProblemList, path: Path, value: unknown, required: boolean): Obj | undefined {
  if (value === undefined || value === null) {
    if (required) problems.add(path, 'is required')
    return undefined
  }
  if (!isObject(value)) {
    problems.add(path, 'must be a mapping of keys to values')
    return undefined
  }
  return value
}

/** The non-empty string at `path`; a problem when it is required and absent, or not one. */
export function stringAt(problems: ProblemList, path: Path, value: unknown, required = false): string | undefined {
  if (value === undefined || value === null) {
    if (required) problems.add(path, 'is required')
    return undefined
  }
  if (typeof value !== 'string' || value === '') {
    problems.add(path, 'must be a non-empty string')
    return undefined
  }
  return value
}

/** The non-empty list of non-empty strings at `path`; a problem for the list, or for each item that is not one. */
export function stringListAt(problems: ProblemList, path: Path, value: unknown, required = false): string[] | undefined {
  if (value === undefined || value === null) {
    if (required) problems.add(path, 'is required')
    return undefined
  }
  if (!Array.isArray(value) || value.length === 0) {
    problems.add(path, 'must be a non-empty list')
    return undefined
  }
  let ok = true
  value.forEach((item, index) => {
    if (typeof item !== 'string' || item === '') {
      problems.add([...path, index], 'must be a non-empty string')
      ok = false
    }
  })
  return ok ? (value as string[]) : undefined
}

/** The duration at `path` in ms (`"30s"`, `"8h"`, or seconds); a problem when it is not one. */
export function durationAt(problems: ProblemList, path: Path, value: unknown): number | undefined {
  if (value === undefined) return undefined
  const ms = parseDuration(value)
  if (ms === undefined) problems.add(path, 'must be a duration such as "30s", "8h", "250ms", or a number of seconds')
  return ms
}

/** Copies `value` with the named keys turned from durations into ms. */
export function withDurations(problems: ProblemList, path: Path, value: Obj, durations: readonly string[]): Obj {
  const out: Obj = { ...value }
  for (const key of durations) {
    if (value[key] !== undefined) out[key] = durationAt(problems, [...path, key], value[key]) ?? value[key]
  }
  return out
}

/** A host name as a rule or a route names it: `wiki.example.org`, or `*.example.org` (lower-case, no port). */
export const HOST_NAME = /^(?:\*\.)?(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/

/** What is wrong with a path glob, or `undefined`: it starts with "/", and has no "?", "#", "%", "\\", spaces or dot segments. */
export function pathGlobProblem(glob: string): string | undefined {
  if (glob.startsWith('/') && !/[?#%\\\s]/.test(glob) && !/\/\.{1,2}(?:\/|$)/.test(glob)) return undefined
  return 'must be a path glob starting with "/", without "?", "#", "%", "\\", spaces or dot segments'
}

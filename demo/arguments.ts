/**
 * The demo's command line (`npm start -- --framework koa --dialect openconext --redis`),
 * read strictly from one table of flags: an unknown flag or a stray word is refused,
 * naming it, so that a misspelt flag never leaves the demo running something else than
 * asked. A new flag is one more entry of {@link DEMO_FLAGS}.
 *
 * @module
 */
import { EMULATOR_DIALECTS } from 'voot-guard/testing'
import { nearestKey } from '../src/internal.js'
import { DEMO_FRAMEWORKS } from './frameworks.js'
import type { DemoOptions } from './options.js'
import { DEMO_SERVICES } from './services.js'

/**
 * One flag of the demo: `--name` alone, or `--name VALUE` / `--name=VALUE` when it has a
 * {@link DemoFlag.value}.
 */
export interface DemoFlag {
  readonly name: string
  /** The placeholder of its value in the usage (`NAME`); none for a flag without a value. */
  readonly value?: string
  /** What it does, for the usage. */
  readonly help: string
  /**
   * Adds the flag to the demo's options; throws {@link DemoUsageError} for a bad value.
   * `value` is `undefined` for a flag without one; `env` is the process's environment.
   */
  readonly apply: (options: DemoOptions, value: string | undefined, env: Readonly<Record<string, string | undefined>>) => DemoOptions
}

/**
 * A command line the demo does not understand: the message names the flag or word; the
 * demo prints it with the usage and exits 2.
 */
export class DemoUsageError extends Error {
  override readonly name = 'DemoUsageError'
}

/**
 * The demo's flags, in the order the usage lists them.
 */
export const DEMO_FLAGS: readonly DemoFlag[] = [
  {
    name: 'framework',
    value: 'NAME',
    help: `the example app to serve: ${DEMO_FRAMEWORKS.join(', ')} (default express)`,
    apply: (options, value) => ({ ...options, framework: oneOf('--framework', value, DEMO_FRAMEWORKS) }),
  },
  {
    name: 'dialect',
    value: 'NAME',
    help: 'the group service the emulator plays: dataporten (Feide, the default) or openconext (SURFconext)',
    apply: (options, value) => ({ ...options, dialect: oneOf('--dialect', value, EMULATOR_DIALECTS) }),
  },
  {
    name: 'redis',
    help: "the guard also on a shared cache tier in Redis: REDIS_URL's, else a redis-server of the demo's own",
    apply: (options, _value, env) => ({ ...options, redis: env.REDIS_URL ?? true }),
  },
  {
    name: 'gate',
    help: 'the gate instead of an app: voot-guard in front of any app, as nginx, Caddy, Traefik or Envoy ask it (alone)',
    apply: (options) => ({ ...options, gate: true }),
  },
  {
    name: 'services',
    value: 'LIST',
    help: `several group services in one app: ${DEMO_SERVICES.join(',')}, Feide and SURFconext on one emulator (alone)`,
    apply: (options, value) => ({ ...options, services: serviceList(value) }),
  },
  {
    name: 'help',
    help: 'print this and exit',
    apply: (options) => options,
  },
]

/**
 * The usage the demo prints for `--help` and after a usage error.
 */
export function demoUsage(flags: readonly DemoFlag[] = DEMO_FLAGS): string {
  const left = flags.map((flag) => `--${flag.name}${flag.value === undefined ? '' : ` ${flag.value}`}`)
  const width = Math.max(...left.map((text) => text.length))
  return [
    'Usage: npm start -- [flags]   (the -- hands the flags to the demo, not to npm)',
    '',
    ...flags.map((flag, index) => `  ${(left[index] ?? '').padEnd(width)}  ${flag.help}`),
    '',
    'Example: npm start -- --framework koa --dialect openconext',
    '',
  ].join('\n')
}

/**
 * What the command line asks for: the demo's options, or the usage (`--help`).
 */
export type DemoCommand = { readonly help: true } | { readonly help: false; readonly options: DemoOptions }

/**
 * Reads the demo's command line against `flags`.
 *
 * @throws {@link DemoUsageError} naming an unknown flag, a stray word, a flag given twice,
 *   a missing or unexpected value, or a value the flag does not take.
 * @example
 * ```ts
 * parseDemoArguments(['--framework', 'koa'], {}) // { help: false, options: { framework: 'koa' } }
 * ```
 */
export function parseDemoArguments(
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  flags: readonly DemoFlag[] = DEMO_FLAGS,
): DemoCommand {
  refuseFlagsNpmKept(args, env, flags)
  let options: DemoOptions = {}
  const seen = new Set<string>()
  for (let index = 0; index < args.length; index++) {
    const arg = args[index] ?? ''
    if (!arg.startsWith('--') || arg === '--') throw new DemoUsageError(`unexpected argument ${JSON.stringify(arg)}: flags start with --`)
    const equals = arg.indexOf('=')
    const name = arg.slice(2, equals === -1 ? undefined : equals)
    const flag = flags.find((each) => each.name === name)
    if (flag === undefined) {
      const near = nearestKey(
        name,
        flags.map((each) => each.name),
      )
      throw new DemoUsageError(`unknown flag --${name}${near === undefined ? '' : ` (did you mean --${near}?)`}`)
    }
    if (seen.has(name)) throw new DemoUsageError(`--${name} is given twice`)
    seen.add(name)
    let value: string | undefined
    if (flag.value === undefined) {
      if (equals !== -1) throw new DemoUsageError(`--${name} takes no value`)
    } else if (equals !== -1) {
      value = arg.slice(equals + 1)
    } else {
      value = args[index + 1]
      if (value === undefined || value.startsWith('--')) throw new DemoUsageError(`--${name} needs a value (${flag.value})`)
      index++
    }
    options = flag.apply(options, value, env)
  }
  if (seen.has('gate') && seen.size > 1 && !seen.has('help')) {
    const others = [...seen].filter((name) => name !== 'gate').map((name) => `--${name}`)
    throw new DemoUsageError(`--gate runs alone: it serves no app, so ${others.join(' and ')} would change nothing`)
  }
  if (seen.has('services') && seen.size > 1 && !seen.has('help')) {
    const others = [...seen].filter((name) => name !== 'services').map((name) => `--${name}`)
    throw new DemoUsageError(`--services runs alone: its app is an Express one of its own, so ${others.join(' and ')} would change nothing`)
  }
  return seen.has('help') ? { help: true } : { help: false, options }
}

function oneOf<T extends string>(flag: string, value: string | undefined, allowed: readonly T[]): T {
  if (!allowed.includes(value as T)) {
    throw new DemoUsageError(`${flag} ${JSON.stringify(value)} is not one of ${allowed.join(', ')}`)
  }
  return value as T
}

/** `--services feide,openconext`: every service the demo has, each once, in any order. */
function serviceList(value: string | undefined): readonly (typeof DEMO_SERVICES)[number][] {
  const names = (value ?? '').split(',').map((name) => name.trim())
  const known = DEMO_SERVICES.filter((name) => names.includes(name))
  if (known.length !== DEMO_SERVICES.length || names.length !== DEMO_SERVICES.length) {
    throw new DemoUsageError(`--services ${JSON.stringify(value)}: the demo serves ${DEMO_SERVICES.join(',')} (both, each once)`)
  }
  return known
}

/**
 * `npm start --framework koa`, without the `--`: npm takes `--framework` as a config of its
 * own (exported to the script as `npm_config_framework=true`) and hands over only `koa`,
 * or nothing for a flag without a value, which would otherwise be ignored in silence.
 */
function refuseFlagsNpmKept(args: readonly string[], env: Readonly<Record<string, string | undefined>>, flags: readonly DemoFlag[]): void {
  const kept = flags.find((flag) => flag.name !== 'help' && env[`npm_config_${flag.name}`] !== undefined)
  if (kept === undefined) return
  const example = ['--' + kept.name, ...(kept.value === undefined ? [] : [args[0] ?? kept.value])].join(' ')
  throw new DemoUsageError(`npm kept --${kept.name} for itself: write the flags after --, as in npm start -- ${example}`)
}

/**
 * `voot-guard gate --config gate.yaml`: runs the gate (`voot-guard/gate`) until SIGTERM or
 * Ctrl-C. With `--check`, validates the configuration and runs its policy tests; with
 * `--test`, runs the policy tests; with `--explain "METHOD URL" --as USER`, prints the rule
 * that answers a request and the decision tree. Every problem of the configuration is
 * printed in one run, with its file, line, column and key; exit 1 for a configuration's
 * problems or a failed test, 2 only for a wrong command line. A start and a SIGHUP refuse a
 * configuration whose policy tests fail, unless `--allow-failing-tests` (loudly) says otherwise.
 *
 * @module
 */
import type { GateConfig, GateConfigProblem, LoadedGateConfig, PolicyRunner, PolicyTestResult, PolicyVerdict } from '../gate/internal.js'
import { InvalidArgumentError } from '../src/index.js'
import { parseCommandArguments, withoutBareTokenFlag } from './arguments.js'
import type { Command } from './command.js'
import { reportError } from './error-report.js'
import { EXIT_DENIED, EXIT_OK } from './exit-codes.js'
import { explanationLines } from './explain-tree.js'
import type { CliIo } from './io.js'
import { commandStopSignal } from './stop-signal.js'
import { printable } from './terminal-text.js'
import { tokenFromEnvironment } from './token-source.js'

const OPTIONS = {
  config: { type: 'string', short: 'c' },
  check: { type: 'boolean' },
  test: { type: 'boolean' },
  explain: { type: 'string' },
  as: { type: 'string' },
  service: { type: 'string' },
  'allow-failing-tests': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const

const HELP = `Usage: voot-guard gate --config FILE [--allow-failing-tests]
       voot-guard gate --config FILE (--check | --test | --explain "METHOD URL" (--as USER | --token) [--service NAME])

Runs the gate: an authorization service that nginx (auth_request), ingress-nginx, Caddy
(forward_auth), Traefik (forwardAuth), Envoy (ext_authz), HAProxy (a Lua action,
examples/gate/voot-gate.lua) or Apache httpd (mod_authnz_fcgi, with "fastcgi" in the
configuration) ask about each request to an app in any language. It decides from live VOOT
group memberships with the same guard as the framework adapters. See docs/gate.md for the
configuration and a snippet per proxy.

Options:
  -c, --config FILE   the configuration (.yaml, .yml or .json); \${NAME} in a value is
                      read from the environment (a missing variable is a problem)
  --check             validate the configuration and run its policy tests; print each
                      problem with its file, line, column and key; exit 0 or 1
  --test              run the configuration's policy tests offline (its fixtures stand
                      for the group service) and print ok / not ok per test; exit 0 or 1
  --explain "M URL"   the rule that answers the request "METHOD URL" and how it decides
  --as USER           ... for a user of the configuration's fixtures (or anonymous)
  --token             ... for the user whose token is in VOOT_TOKEN, asking the group
                      service (the token is never taken from the command line)
  --service NAME      ... signed in with that one of the configuration's "services"
                      (default: a bearer token, routed by their hosts, paths and issuers)
  --allow-failing-tests
                      an emergency exit: serve a configuration whose policy tests
                      fail, at the start and on every SIGHUP, with a warning per
                      failing test (without it, such a configuration is refused)
  -h, --help          show this help

Exit codes: 0 valid, tests passed, or explained; 1 problems in the configuration or a
failed test (a start refuses a configuration whose policy tests fail, naming each); 2 a
wrong command line. Stops gracefully on SIGTERM or Ctrl-C: answers under way finish first.
On SIGHUP it reads the file again: a valid configuration whose tests pass serves new
requests (answers under way finish under the old one), a refused one is reported problem by
problem (each failing test too) and the running one kept.
`

function sortedByPlace(problems: readonly GateConfigProblem[]): GateConfigProblem[] {
  const at = (problem: GateConfigProblem) => (problem.line ?? Number.MAX_SAFE_INTEGER) * 10_000 + (problem.column ?? 0)
  return [...problems].sort((a, b) => at(a) - at(b))
}

function verdictText(verdict: PolicyVerdict): string {
  const rule = verdict.rule === undefined ? 'no rule' : `rule ${verdict.rule}`
  return `${verdict.outcome} (${verdict.status}, ${rule})`
}

/** TAP: a plan, a line per test, the explanation of each failure as comments. */
function printResults(results: readonly PolicyTestResult[], io: CliIo): number {
  io.stdout.write(`1..${results.length}\n`)
  let failed = 0
  for (const { test, ok, verdict } of results) {
    if (ok) {
      io.stdout.write(`ok ${test.number} - ${printable(test.title)}: ${verdictText(verdict)}\n`)
      continue
    }
    failed++
    const wanted = test.rule === undefined ? test.expect : `${test.expect} by rule ${test.rule}`
    io.stdout.write(`not ok ${test.number} - ${printable(test.title)}: expected ${wanted}, got ${verdictText(verdict)}\n`)
    io.stdout.write(`  # ${printable(verdict.reason)}\n`)
    if (verdict.tree !== undefined) for (const line of explanationLines(verdict.tree)) io.stdout.write(`  #${line}\n`)
  }
  io.stdout.write(`# ${results.length - failed} of ${results.length} policy tests pass\n`)
  return failed
}

/** `voot-guard/gate`, loaded only by this command. */
type GateModule = typeof import('../gate/internal.js')

/** What `--explain` asks: the request, and who sends it (`as`, a fixture user, or the `token` of VOOT_TOKEN). */
interface ExplainAsk {
  readonly request: string
  readonly as: string | undefined
  readonly token: string | undefined
  /** With several group services: the one the user signed in with. */
  readonly service: string | undefined
}

async function explain(gate: GateModule, runner: PolicyRunner, ask: ExplainAsk, io: CliIo): Promise<number> {
  const { request, as, token, service } = ask
  const line = gate.parseRequestLine(request)
  if (line === undefined) throw new InvalidArgumentError('--explain takes "METHOD URL", such as "GET https://wiki.example.org/admin"')
  const users = [...runner.settings.policy.fixtures.keys()]
  let credentials = token
  if (token === undefined && as !== 'anonymous') {
    if (as === undefined || !users.includes(as))
      throw new InvalidArgumentError(`--as must be anonymous or a user of the configuration's fixtures (${users.join(', ') || 'none'})`)
    credentials = runner.tokenOf(as)
  }
  const names = runner.settings.services?.list.map((each) => each.name)
  if (service !== undefined && (names === undefined || !names.includes(service))) {
    throw new InvalidArgumentError(
      names === undefined
        ? '--service needs a configuration with "services"'
        : `--service must be one of the services (${names.join(', ')})`,
    )
  }
  const verdict = await runner.decide({ ...line, token: credentials, service })
  const index = runner.settings.rules.findIndex((rule) => rule.id === verdict.rule)
  const rule = runner.settings.rules[index]
  io.stdout.write(
    `${printable(`${line.method} ${line.scheme}://${line.authority}${line.target}`)} as ${token === undefined ? printable(as ?? '') : 'the holder of VOOT_TOKEN'}${service === undefined ? '' : ` (${printable(service)})`}\n`,
  )
  if (rule === undefined) io.stdout.write('rule: none matches\n')
  else {
    const where = [
      rule.host === undefined ? 'any host' : `host ${rule.host}`,
      `path ${rule.path ?? '/**'}`,
      `methods ${rule.methods?.join(', ') ?? 'all'}`,
    ]
    io.stdout.write(`rule: ${printable(rule.id ?? String(index))} (rules[${index}]: ${where.join(', ')})\n`)
  }
  io.stdout.write(`answer: ${verdictText(verdict)}: ${printable(verdict.reason)}\n`)
  if (verdict.tree !== undefined) {
    io.stdout.write('how it was decided:\n')
    for (const line of explanationLines(verdict.tree)) io.stdout.write(`${line}\n`)
  }
  return EXIT_OK
}

/**
 * The `gate` command.
 */
export const gateCommand: Command = {
  name: 'gate',
  summary:
    'run the gate that proxies (nginx, Caddy, Traefik, Envoy, HAProxy, Apache) ask about each request; check, test or explain its rules',
  help: HELP,
  async run(args, io) {
    const { signal: stopped, dispose } = commandStopSignal(io.signal)
    let hangUp: (() => void) | undefined
    try {
      const taken = withoutBareTokenFlag(args)
      const values = parseCommandArguments(taken.args, OPTIONS)
      if (values.help === true) {
        io.stdout.write(HELP)
        return EXIT_OK
      }
      if (values.config === undefined)
        throw new InvalidArgumentError('--config is required: the gate configuration file (.yaml, .yml or .json)')
      const modes = [values.check, values.test, values.explain !== undefined].filter((on) => on === true).length
      if (modes > 1) throw new InvalidArgumentError('give one of --check, --test and --explain')
      if (values.explain === undefined && (values.as !== undefined || taken.bare))
        throw new InvalidArgumentError('--as and --token go with --explain')
      const allowFailingTests = values['allow-failing-tests'] === true
      if (modes > 0 && allowFailingTests)
        throw new InvalidArgumentError('--allow-failing-tests goes with running the gate, not with --check, --test or --explain')
      if (values.explain !== undefined && (values.as === undefined) === !taken.bare)
        throw new InvalidArgumentError('--explain needs exactly one of --as USER (from the fixtures) and --token (VOOT_TOKEN)')
      const token = taken.bare ? tokenFromEnvironment(io.env) : undefined
      // Loaded only here: the other commands need none of the gate's code.
      const gate = await import('../gate/internal.js')
      const file = values.config
      const loaded = await gate.loadGateConfig(file, io.env)
      const refuse = (problems: readonly GateConfigProblem[]): number => {
        for (const problem of sortedByPlace(problems)) io.stderr.write(`${gate.formatConfigProblem(problem)}\n`)
        io.stderr.write(`voot-guard gate: ${problems.length} problem${problems.length === 1 ? '' : 's'} in ${file}\n`)
        return EXIT_DENIED
      }
      // Every problem in one run: the file's own (YAML, variables) and those of its checks.
      const problemsOf = async (read: LoadedGateConfig) =>
        read.config === undefined ? read.problems : [...read.problems, ...read.place(await gate.configProblems(read.config))]
      const problems = await problemsOf(loaded)
      if (problems.length > 0) return refuse(problems)

      if (values.check === true || values.test === true || values.explain !== undefined) {
        let runner: PolicyRunner
        try {
          runner = gate.createPolicyRunner(loaded.config, { live: token !== undefined })
        } catch (error) {
          if (error instanceof gate.GateConfigError) return refuse(loaded.place(error.problems))
          throw error
        }
        try {
          if (values.explain !== undefined)
            return await explain(gate, runner, { request: values.explain, as: values.as, token, service: values.service }, io)
          const results = await runner.runTests()
          if (values.test === true && results.length === 0) {
            io.stderr.write(`voot-guard gate: ${file} has no tests (add "fixtures" and "tests"; see docs/gate.md)\n`)
            return EXIT_DENIED
          }
          const failed = results.length === 0 ? 0 : printResults(results, io)
          if (failed > 0) {
            io.stderr.write(`voot-guard gate: ${failed} of ${results.length} policy tests fail in ${file}\n`)
            return EXIT_DENIED
          }
          if (values.check === true) {
            const tests = results.length === 0 ? 'no policy tests' : `its ${results.length} policy tests pass`
            io.stdout.write(`${file}: the configuration is valid; ${tests}\n`)
          }
          return EXIT_OK
        } finally {
          await runner.close()
        }
      }
      if (allowFailingTests) {
        io.stderr.write(
          'voot-guard gate: WARNING: --allow-failing-tests: a configuration whose policy tests fail is served, now and on every reload (SIGHUP); for emergencies only: restart without it as soon as the tests pass\n',
        )
      }
      // Started at once: the gate checks the configuration as it builds, runs its policy tests, and says every problem.
      let running
      try {
        running = await gate.startGateServer(loaded.config as GateConfig, {
          signal: stopped,
          logger: { warn: (message: string) => io.stderr.write(`${message}\n`) },
          output: io,
          allowFailingTests,
        })
      } catch (error) {
        if (error instanceof gate.GateConfigError) return refuse(loaded.place(error.problems))
        throw error
      }
      io.stdout.write(`voot-guard gate is listening on ${running.url} (${running.gate.settings.rules.length} rules)\n`)
      if (running.fastcgi !== undefined) {
        io.stdout.write(`voot-guard gate answers Apache's mod_authnz_fcgi on fcgi://${running.fastcgi.address}/\n`)
      }
      const server = running
      // SIGHUP: the file read again; a valid one serves new requests, a refused one changes nothing.
      hangUp = () => {
        void (async () => {
          if (allowFailingTests) io.stderr.write('voot-guard gate: WARNING: --allow-failing-tests is in force for this reload\n')
          const again = await gate.loadGateConfig(file, io.env)
          const found = [...(await problemsOf(again))]
          if (found.length === 0) {
            try {
              await server.reload(again.config as GateConfig)
              io.stdout.write(`voot-guard gate reloaded ${file} (${server.gate.settings.rules.length} rules)\n`)
              return
            } catch (error) {
              if (!(error instanceof gate.GateConfigError)) throw error
              found.push(...again.place(error.problems))
            }
          }
          for (const problem of sortedByPlace(found)) io.stderr.write(`${gate.formatConfigProblem(problem)}\n`)
          io.stderr.write(
            `voot-guard gate: reload refused: ${found.length} problem${found.length === 1 ? '' : 's'} in ${file}; the running configuration is kept\n`,
          )
        })().catch((error: unknown) =>
          io.stderr.write(
            `voot-guard gate: reload failed: ${error instanceof Error ? error.message : 'error'}; the running configuration is kept\n`,
          ),
        )
      }
      process.on('SIGHUP', hangUp)
      running.gate.ready.then(
        () => io.stdout.write('voot-guard gate is ready: the group service answers\n'),
        (error: unknown) =>
          io.stderr.write(
            `voot-guard gate: not ready yet: ${error instanceof Error ? error.message : 'error'} (it answers 503 until the group service answers)\n`,
          ),
      )
      await running.closed
      io.stdout.write('voot-guard gate stopped.\n')
      return EXIT_OK
    } catch (error) {
      return reportError(error, io, { command: 'gate', json: false })
    } finally {
      if (hangUp !== undefined) process.off('SIGHUP', hangUp)
      dispose()
    }
  },
}

/**
 * `voot-guard gate --config gate.yaml [--check]`: runs the gate (`voot-guard/gate`) until
 * SIGTERM or Ctrl-C, or, with `--check`, validates the configuration and exits 0 or 1,
 * printing every problem with its file, line and key.
 *
 * @module
 */
import type { GateConfig, GateConfigProblem } from '../gate/index.js'
import { InvalidArgumentError } from '../src/index.js'
import { parseCommandArguments } from './arguments.js'
import type { Command } from './command.js'
import { reportError } from './error-report.js'
import { EXIT_DENIED, EXIT_OK } from './exit-codes.js'
import { commandStopSignal } from './stop-signal.js'

const OPTIONS = {
  config: { type: 'string', short: 'c' },
  check: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const

const HELP = `Usage: voot-guard gate --config FILE [--check]

Runs the gate: an authorization service that nginx (auth_request), ingress-nginx, Caddy
(forward_auth), Traefik (forwardAuth) or Envoy (ext_authz) ask about each request to an
app in any language. It decides from live VOOT group memberships with the same guard as
the framework adapters. See docs/gate.md for the configuration and a snippet per proxy.

Options:
  -c, --config FILE   the configuration (.yaml, .yml or .json); \${NAME} in a value is
                      read from the environment (a missing variable is an error)
  --check             validate the configuration, print each problem with its file,
                      line and key, and exit 0 (valid) or 1 (problems)
  -h, --help          show this help

Stops gracefully on SIGTERM or Ctrl-C: answers under way finish first.
`

/**
 * The `gate` command.
 */
export const gateCommand: Command = {
  name: 'gate',
  summary: 'run the gate that proxies (nginx, Caddy, Traefik, Envoy) ask about each request',
  help: HELP,
  async run(args, io) {
    const { signal: stopped, dispose } = commandStopSignal(io.signal)
    try {
      const values = parseCommandArguments(args, OPTIONS)
      if (values.help === true) {
        io.stdout.write(HELP)
        return EXIT_OK
      }
      if (values.config === undefined)
        throw new InvalidArgumentError('--config is required: the gate configuration file (.yaml, .yml or .json)')
      // Loaded only here: the other commands need none of the gate's code.
      const { checkGateConfig, formatConfigProblem, GateConfigError, loadGateConfig, startGateServer } = await import('../gate/index.js')
      const file = values.config
      const loaded = await loadGateConfig(file, io.env)
      const refuse = (problems: readonly GateConfigProblem[]): number => {
        for (const problem of problems) io.stderr.write(`${formatConfigProblem(problem)}\n`)
        io.stderr.write(`voot-guard gate: ${problems.length} problem${problems.length === 1 ? '' : 's'} in ${file}\n`)
        return EXIT_DENIED
      }
      if (loaded.problems.length > 0) return refuse(loaded.problems)
      if (values.check === true) {
        const problems = loaded.place(await checkGateConfig(loaded.config))
        if (problems.length > 0) return refuse(problems)
        io.stdout.write(`${file}: the configuration is valid\n`)
        return EXIT_OK
      }
      // Started at once: the gate checks the configuration as it builds, and says every problem.
      let running
      try {
        running = await startGateServer(loaded.config as GateConfig, {
          signal: stopped,
          logger: { warn: (message: string) => io.stderr.write(`${message}\n`) },
        })
      } catch (error) {
        if (error instanceof GateConfigError) return refuse(loaded.place(error.problems))
        throw error
      }
      io.stdout.write(`voot-guard gate is listening on ${running.url} (${running.gate.settings.rules.length} rules)\n`)
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
      dispose()
    }
  },
}

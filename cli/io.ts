/**
 * What a CLI command writes to and reads from, so that tests run commands in-process and
 * the token can be kept out of every byte written.
 *
 * @module
 */

/**
 * Something text can be written to: `process.stdout`, or a collector in tests.
 */
export interface TextSink {
  write(text: string): unknown
}

/**
 * The outside world of one CLI run.
 */
export interface CliIo {
  /** Results (tables, JSON, decisions). */
  readonly stdout: TextSink
  /** Errors and hints. */
  readonly stderr: TextSink
  /** Environment variables; `VOOT_TOKEN` and `VOOT_BASE_URL` are read from here. */
  readonly env: Readonly<Record<string, string | undefined>>
  /**
   * Stops the command when it aborts (the executable wires it to SIGINT and SIGTERM):
   * `emulator` closes and exits 0; `groups` and `check` give up their call and exit 2.
   * Without it, `emulator` stops on the process's own SIGINT or SIGTERM.
   */
  readonly signal?: AbortSignal
  /**
   * How the reader runs this command, for the commands it prints (`npm run cli --` in a
   * clone, see cli/invocation.ts). Default `npx voot-guard`.
   */
  readonly invocation?: string
}

const REDACTED = '[redacted]'

/**
 * Wraps `io` so that `secret` never reaches stdout or stderr, whatever a message carries.
 * The library already keeps tokens out of its errors; this is the second lock on the door.
 */
export function redactingIo(io: CliIo, secret: string): CliIo {
  if (secret === '') return io
  const redact = (sink: TextSink): TextSink => ({ write: (text) => sink.write(text.split(secret).join(REDACTED)) })
  return { ...io, stdout: redact(io.stdout), stderr: redact(io.stderr) }
}

/**
 * Where the CLI's token comes from: the `VOOT_TOKEN` environment variable, and nowhere else.
 *
 * @module
 */
import { InvalidArgumentError } from '../src/index.js'
import { isWellFormedToken, MAX_TOKEN_LENGTH } from '../src/internal.js'
import { TOKEN_FROM_ENVIRONMENT } from './arguments.js'

/**
 * Returns the bearer token in `VOOT_TOKEN`. Surrounding whitespace (a newline from a file
 * or a paste) is dropped; a `Bearer ` prefix is tolerated, since people copy whole headers.
 *
 * @throws {@link InvalidArgumentError} when the variable is unset, empty or not RFC 6750
 *   `b64token` syntax. The message never contains the value.
 */
export function tokenFromEnvironment(env: Readonly<Record<string, string | undefined>>): string {
  const raw = env.VOOT_TOKEN?.trim() ?? ''
  if (raw === '') throw new InvalidArgumentError(`VOOT_TOKEN is not set. ${TOKEN_FROM_ENVIRONMENT}`)
  const token = raw.replace(/^bearer +/i, '')
  if (!isWellFormedToken(token)) {
    throw new InvalidArgumentError(
      `VOOT_TOKEN does not hold a well-formed bearer token (RFC 6750 b64token characters, at most ${MAX_TOKEN_LENGTH} of them)`,
    )
  }
  return token
}

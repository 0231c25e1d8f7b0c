/**
 * Retries of upstream calls, kept inside one deadline.
 *
 * Every call to the group service is an idempotent `GET`, but only one kind of failure is
 * worth a second try: the connection was refused or reset before the service said
 * anything (no HTTP status). Typical causes are a restarting instance or a keep-alive
 * connection the server closed just as it was reused. A status (4xx, 5xx, 429, a
 * redirect), a bad body or a timeout is never retried: the service answered, or is too
 * slow, and asking again would only add load and latency.
 *
 * A retry never stretches the worst case: the first attempt and every retry share one
 * budget (the resolver's `timeout`), and a retry is made only when enough of it is left.
 *
 * @module
 */
import { AbortedError, UpstreamError } from '../../errors.js'

/**
 * Least time worth another attempt, in ms: with less left of the budget, the first
 * failure is returned at once instead of a retry that could only time out.
 */
export const MIN_ATTEMPT_MS = 25

/**
 * Whether a failed call may be retried: a network failure (refused, reset) that happened
 * before any HTTP status was received.
 */
export function isRetryable(error: unknown): error is UpstreamError {
  return error instanceof UpstreamError && error.code === 'ERR_UPSTREAM_NETWORK' && error.upstreamStatus === undefined
}

/**
 * One retry about to be made, as reported to `onRetry`.
 */
export interface RetryInfo {
  /** 1 for the first retry, 2 for the second, ... */
  readonly attempt: number
  /** The wait before the retry, in ms. */
  readonly delayMs: number
  /** The failure being retried (never carries a token). */
  readonly error: UpstreamError
}

/**
 * Settings of {@link createRetrier}.
 */
export interface RetrierOptions {
  /** Most retries after the first attempt (0 turns retries off). */
  readonly retries: number
  /** Wait before the first retry, in ms; doubled for each further one, with jitter (50 to 100 %). */
  readonly delay: number
  /** Time for the first attempt and all retries together, in ms. */
  readonly budget: number
  /** Source of jitter in `[0, 1)`. Default `Math.random`. */
  readonly random?: () => number
  /** Monotonic clock in ms. Default `performance.now`. */
  readonly clock?: () => number
}

/**
 * Runs an upstream call with retries. `attempt` receives `undefined` on the first try and
 * an `AbortSignal` carrying the rest of the budget on each retry.
 */
export interface Retrier {
  run<T>(attempt: (signal: AbortSignal | undefined) => Promise<T>, onRetry?: (info: RetryInfo) => void): Promise<T>
}

/**
 * Creates a {@link Retrier}. The settings are trusted: the resolver validates its options.
 */
export function createRetrier(options: RetrierOptions): Retrier {
  const { retries, delay, budget } = options
  const random = options.random ?? Math.random
  const clock = options.clock ?? (() => performance.now())

  function waitBefore(retry: number): number {
    const base = delay * 2 ** (retry - 1)
    return Math.round(base * (0.5 + random() / 2))
  }

  return {
    async run(attempt, onRetry) {
      if (retries === 0) return attempt(undefined)
      const started = clock()
      let failure: unknown
      try {
        return await attempt(undefined)
      } catch (error) {
        failure = error
      }
      for (let retry = 1; retry <= retries; retry++) {
        if (!isRetryable(failure)) throw failure
        const wait = waitBefore(retry)
        if (budget - (clock() - started) - wait < MIN_ATTEMPT_MS) throw failure
        onRetry?.({ attempt: retry, delayMs: wait, error: failure })
        await sleep(wait)
        const left = budget - (clock() - started)
        if (left < MIN_ATTEMPT_MS) throw failure
        try {
          return await withinBudget(attempt, left, budget, failure.endpoint)
        } catch (error) {
          failure = error
        }
      }
      throw failure
    },
  }
}

function sleep(ms: number): Promise<void> {
  return ms <= 0 ? Promise.resolve() : new Promise((resolve) => setTimeout(resolve, ms))
}

/** One retry, given up (as a timeout of the whole call) when the budget runs out. */
async function withinBudget<T>(
  attempt: (signal: AbortSignal | undefined) => Promise<T>,
  left: number,
  budget: number,
  endpoint: string | undefined,
): Promise<T> {
  const controller = new AbortController()
  const timer = setTimeout(() => {
    controller.abort()
  }, left)
  try {
    return await attempt(controller.signal)
  } catch (error) {
    if (error instanceof AbortedError && controller.signal.aborted) {
      throw new UpstreamError('ERR_UPSTREAM_TIMEOUT', `The group service did not answer ${endpoint ?? 'the call'} within ${budget} ms`, {
        ...(endpoint === undefined ? {} : { endpoint }),
      })
    }
    throw error
  } finally {
    clearTimeout(timer)
  }
}

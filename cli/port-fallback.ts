/**
 * Listening on a well-known port when it is free, and on any free port when it is not,
 * so that a demo started twice (or beside another dev server) still starts.
 *
 * @module
 */

/**
 * Calls `start(preferred)`; when that fails because the address is in use, calls
 * `start(0)` (any free port) instead. Other errors pass through.
 */
export async function withPortFallback<T>(preferred: number, start: (port: number) => Promise<T>): Promise<T> {
  try {
    return await start(preferred)
  } catch (error) {
    if (!isAddressInUse(error)) throw error
    return start(0)
  }
}

/**
 * Whether `error` is a listen failure on a port that is already taken.
 */
export function isAddressInUse(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'EADDRINUSE'
}

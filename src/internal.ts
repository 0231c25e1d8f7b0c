/**
 * The core's internal face: what only the package's own rooms need (the adapters, the gate,
 * `redis/`, `otel/`, `oauth/`, `testing/`, the CLI). It is not in package.json `exports`, so
 * nothing outside the package can import it, and its names are free to change in any release.
 *
 * Side rooms import the core through its faces only: `index.ts` (the application's),
 * `adapter-kit.ts` (adapter authors') and this one, never through the core's files.
 *
 * @internal
 * @module
 */
// Options checked as the core checks its own, so that every factory of the package refuses
// a bad option in the same words.
export { functionOption, integerOption, nearestKey, objectOption, rejectUnknownKeys, type IntegerBounds } from './option-checks.js'
// The upstream guard's circuit breaker: the shared tier stops asking a failing Redis with it.
export {
  createCircuitBreaker,
  type CircuitBreaker,
  type CircuitBreakerSettings,
  type CircuitChange,
  type CircuitOutcome,
  type CircuitPermit,
} from './resolver/upstream/circuit-breaker.js'
export { isLoopbackHost } from './client/loopback-host.js'
export { misconfigurationHint } from './resolver/misconfiguration.js'
export { DEFAULT_TIMEOUT, MAX_TIMEOUT } from './client/options.js'
export { DEFAULT_CACHE_TTL } from './resolver/options.js'
export { deepFreeze } from './resolver/store/deep-freeze.js'
export { requiredText } from './decision/required-text.js'
export { isActiveAt } from './decision/membership.js'
export { describeRequirement } from './decision/requirements.js'
export { isWellFormedToken, MAX_TOKEN_LENGTH } from './token.js'
export { MAX_GROUP_ID_LENGTH } from './group-id.js'
export { nearestPrefixService, servicesByPrefix, type GroupPrefixEntries } from './services/projection.js'

/**
 * Whether a `baseUrl` ending in `/groups` (Feide's shape) points under the root of an
 * OpenConext-voot service (SURFconext's VOOT), which serves `me/groups` at its root.
 *
 * Why a second question: `verify()` asks `grouptypes` without a token, and a 401 proves a
 * group service is there. OpenConext answers 401 to EVERY path without a token (Spring
 * Security's `anyRequest().authenticated()`), under a stray `/groups` as at its root, so
 * that answer cannot tell them apart, and the first user would meet a 503 (the 404 of
 * `/groups/me/groups`). Its actuator's health, `{root}/internal/health`, is the one route
 * it answers without a token (`{"status":"UP"}`); under a stray `/groups` it is a 401 too.
 * So a health answer one `/groups` up names the service's root.
 *
 * Not public: `createGroupsClient` registers the probe of its clients, and the resolver's
 * `verify()` finds it for a client of ours; any other client is not probed.
 *
 * @module
 */
import { AbortedError } from '../errors.js'

/** The path of OpenConext-voot's health, from its root (Spring Boot's actuator under `/internal`). */
export const OPENCONEXT_HEALTH_PATH = '/internal/health'

/**
 * Resolves with the address of the OpenConext-voot root one `/groups` above the client's
 * base URL when its health answers there, else `undefined` (nothing learnt: a 404, a 401,
 * anything else, a failure). Rejects only with `AbortedError` (the caller's signal).
 */
export type ServiceRootProbe = (signal: AbortSignal | undefined) => Promise<string | undefined>

// Keyed by the client object (a `GroupsClient`), without importing its module: no import circle.
const probes = new WeakMap<object, ServiceRootProbe>()

/** The base path one `/groups` up, or `undefined` when `basePath` does not end in `/groups`. */
export function pathAboveGroups(basePath: string): string | undefined {
  return basePath.endsWith('/groups') ? basePath.slice(0, -'/groups'.length) : undefined
}

/** Whether a body is a Spring Boot actuator's health: an object with a string `status`. */
export function isActuatorHealth(body: unknown): boolean {
  return typeof body === 'object' && body !== null && !Array.isArray(body) && typeof (body as { status?: unknown }).status === 'string'
}

/** Makes `probe` the {@link ServiceRootProbe} of `client` (by `createGroupsClient`). */
export function registerServiceRootProbe(client: object, probe: ServiceRootProbe): void {
  probes.set(client, probe)
}

/**
 * Asks `client`'s probe, if it has one: the OpenConext root above a stray `/groups`, or
 * `undefined`. A failure other than the caller's signal is "nothing learnt".
 */
export async function openConextRootAbove(client: object, signal: AbortSignal | undefined): Promise<string | undefined> {
  const probe = probes.get(client)
  if (probe === undefined) return undefined
  try {
    return await probe(signal)
  } catch (error) {
    if (error instanceof AbortedError) throw error
    return undefined
  }
}

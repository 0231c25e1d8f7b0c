/**
 * What a dialect of the emulator is made of: the request its routes answer, a matched
 * route, and a dialect's route table. Types only, shared by \`dialect.ts\` and each
 * dialect's routes.
 *
 * @module
 */
import type { Answer } from '../answer.js'
import type { Caller } from '../bearer-auth.js'
import type { EmulatorData } from '../data/data.js'

/**
 * Everything a dialect needs to answer one request on a matched route.
 */
export interface ServiceRequest {
  readonly method: string
  readonly query: URLSearchParams
  readonly caller: Caller
  readonly data: EmulatorData
  /** The emulator clock's time, in ms since the epoch. */
  readonly now: number
  /** Group ids `me/groups` leaves out (the `partial` fault). */
  readonly omit?: ReadonlySet<string>
}

/**
 * One matched route of a dialect: its name (for faults and the log) and its answer.
 */
export interface MatchedRoute {
  /** Such as `me/groups`, `me/groups/{groupid}`, `members/{groupid}`. */
  readonly name: string
  /** Whether the route answers a JSON array (the `wrong-shape` fault turns it into an object). */
  readonly list: boolean
  answer(request: ServiceRequest): Answer
}

/**
 * A dialect's routes.
 */
export interface DialectRoutes {
  /** The path prefix of the group endpoints (`/groups`, or `''` at the root): `baseUrl` is the origin plus this. */
  readonly basePath: string
  /** Whether a raw pathname belongs to the group service rather than the authorization server. */
  isServicePath(pathname: string): boolean
  /** Matches a raw (still percent-encoded) pathname; `undefined` for an unknown route. */
  match(pathname: string): MatchedRoute | undefined
  /** The answer to a path of the group service that matches no route. */
  unknownRoute(request: ServiceRequest): Answer
}

/**
 * What the parent tells a server child, and what the child answers when ready.
 *
 * @module
 */

/** Configuration of a server child (JSON in its first argument). */
export interface ServerConfig {
  readonly framework: 'express5' | 'express4' | 'koa3' | 'fastify' | 'hono' | 'nest-express' | 'node-http'
  /** The group service (the emulator child). */
  readonly baseUrl: string
  /** Mount the JWT peers (Express only). */
  readonly peers?: boolean
  /** Mount `/coalesce` and the naive controls (Express only). */
  readonly coalescing?: boolean
  /** Mount `/hang` and `/refused` with this deadline (Express only). */
  readonly failures?: { readonly timeout: number; readonly refusedUrl: string }
}

/** A peer route as the parent sees it. */
export interface PeerInfo {
  readonly path: string
  readonly algorithm: 'RS256' | 'HS256'
  readonly label: string
}

/** The ready message of a server child. */
export interface ServerReady {
  readonly port: number
  readonly peers?: readonly PeerInfo[]
  readonly jwt?: { readonly RS256: string; readonly HS256: string }
}

/** The group of `/coalesce`: alice is not in it, so the list cannot decide and `me/groups/{id}` is asked too. */
export const COALESCE_GROUP_ID = 'fc:fs:fs:emne:example.org:INF1000:1'

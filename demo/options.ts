/**
 * The options of the demo (`startDemo`), which the command line's flags fill in.
 *
 * @module
 */
import type { EmulatorDialect } from 'voot-guard/testing'
import type { DemoFramework } from './frameworks.js'
import type { DemoService } from './services.js'

/**
 * Options of `startDemo` (demo/start.ts).
 */
export interface DemoOptions {
  /** The app's port. Default 3000, or any free port when it is taken. */
  port?: number
  /** The emulator's port. Default 4000, or any free port when it is taken. */
  emulatorPort?: number
  /** The example app to serve: `express` (default), `koa`, `fastify`, `hono`, `fetch` or `nestjs`. */
  framework?: DemoFramework
  /** Receives the guide. Default: written to stdout. */
  print?: (guide: string) => void
  /** The service the emulator plays (`npm start -- --dialect openconext`). Default `'dataporten'`. */
  dialect?: EmulatorDialect
  /**
   * A shared cache tier on Redis for the app's guard (`npm start -- --redis`): `true` starts
   * a throwaway redis-server from the PATH, a string is the URL of a running Redis. Default
   * none.
   */
  redis?: true | string
  /**
   * The gate instead of an app (`npm start -- --gate`): `voot-guard gate` on the emulator,
   * with curl lines that play a proxy's sub-requests. Only `runDemoCommand` reads it.
   */
  gate?: true
  /**
   * Several group services in one app instead (`npm start -- --services feide,openconext`):
   * demo/services.ts. Only `runDemoCommand` reads it.
   */
  services?: readonly DemoService[]
}

/**
 * Express adapter (Express 4 and 5): route guards over the framework-agnostic core.
 *
 * @example
 * ```ts
 * import express from 'express'
 * import { createGuard } from 'voot-guard/express'
 *
 * const guard = createGuard({ baseUrl: 'https://groups-api.example.org/groups', realm: 'my-app' })
 * const app = express()
 * app.get('/staff', guard.requireGroup('fc:org:example.org', 'admin'), (req, res) => {
 *   res.json({ allowed: req.voot?.decision.allowed })
 * })
 * ```
 *
 * @module
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express'
import {
  authorizationOf,
  createCredentialsReader,
  createGuardCore,
  createGuards,
  isAnonymous,
  splitGuardOptions,
  type Credentials,
  type FoundToken,
  type GuardOptions,
  type Guards,
  type VootContext,
} from '../../src/adapter-kit.js'
import type { Requirement } from '../../src/index.js'
import { setVoot } from '../../src/guard/request-voot.js'

declare global {
  // Declaration merging is how Express types request extensions.
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /**
       * Set by a voot-guard guard once it allowed the request. On an Express request it is
       * an accessor of Express's request prototype rather than an own property (faster on
       * Node 20 and 22; see docs/frameworks/express.md): read it and assign it as usual,
       * but clear it by assigning `undefined`, not with `delete`.
       */
      voot?: VootContext | undefined
    }
  }
}

/**
 * Options of the Express {@link createGuard}: the core's options plus where the token
 * comes from.
 *
 * @example
 * ```ts
 * const guard = createGuard({ baseUrl, getToken: (req) => req.session?.accessToken })
 * ```
 */
export interface ExpressGuardOptions extends GuardOptions {
  /**
   * Finds the token elsewhere than the `Authorization` header: return the token, or
   * `{ token, expiresAt }` so that no cached answer outlives it, or `undefined` for none.
   */
  getToken?: (req: Request) => FoundToken
}

/**
 * The guards of one configuration; each factory returns an Express middleware.
 *
 * @example
 * ```ts
 * const staffOnly = guard.requireGroup('fc:org:example.org', 'admin')
 * ```
 */
export type ExpressGuard = Guards<RequestHandler>

/**
 * Creates the Express guards. Options are validated here; each guard's arguments are
 * validated when the route is declared.
 *
 * @example
 * ```ts
 * const guard = createGuard({ baseUrl: 'https://groups-api.example.org/groups' })
 * app.get('/teachers', guard.requireAnyGroup(['fc:gogroup:a', 'fc:gogroup:b'], 'admin'), handler)
 * ```
 */
export function createGuard(options: ExpressGuardOptions): ExpressGuard {
  const { getToken, coreOptions } = splitGuardOptions(options)
  const credentialsOf = createCredentialsReader(getToken, (req: Request) => authorizationOf(req))
  const core = createGuardCore(coreOptions)

  function middleware(requirement: Requirement, optional: boolean): RequestHandler {
    // Express 4 ignores returned promises, so every outcome is settled here explicitly.
    return (req: Request, res: Response, next: NextFunction): void => {
      let credentials: Credentials
      try {
        credentials = credentialsOf(req)
      } catch (error) {
        next(error)
        return
      }
      // authenticate({ optional: true }) without credentials: on, with no `req.voot`.
      if (optional && isAnonymous(credentials)) {
        next()
        return
      }
      // Warm cache: decided synchronously, no promise and no closure per request.
      const result = core.authorizeNow(credentials, requirement)
      if (!(result instanceof Promise)) {
        setVoot(req, result)
        next()
        return
      }
      result.then(
        (context) => {
          setVoot(req, context)
          next()
        },
        (error: unknown) => {
          const answer = core.delegateErrors || res.headersSent ? undefined : core.answer(error)
          if (answer === undefined) {
            next(error)
            return
          }
          res.status(answer.status).set(answer.headers).send(JSON.stringify(answer.body))
        },
      )
    }
  }

  return createGuards(core, middleware)
}

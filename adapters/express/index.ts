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
import type { ParamsDictionary } from 'express-serve-static-core'
import {
  authorizationOf,
  createGuardFlow,
  createGuards,
  type FrameworkIO,
  type GuardOptions,
  type Guards,
  type RequirementOf,
  type TokenSource,
  type VootContext,
} from '../../src/adapter-kit.js'
import type { Requirement } from '../../src/index.js'
import { setVoot } from './request-voot.js'

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
  getToken?: TokenSource<Request>
}

/**
 * A guard as Express sees it: a middleware generic in the route's parameters, so that the
 * handler after it keeps what Express infers from the path (`req.params.id` is a `string`
 * on `'/courses/:id'`), as if the guard were not there.
 *
 * @example
 * ```ts
 * app.get('/courses/:id', guard.requireGroup(courseGroup, 'admin'), (req, res) => res.send(req.params.id))
 * ```
 */
export type ExpressGuardHandler = <
  P = ParamsDictionary,
  ResBody = unknown,
  ReqBody = unknown,
  ReqQuery = unknown,
  L extends Record<string, unknown> = Record<string, unknown>,
>(
  req: Request<P, ResBody, ReqBody, ReqQuery, L>,
  res: Response<ResBody, L>,
  next: NextFunction,
) => void

/**
 * The guards of one configuration; each factory returns an Express middleware. A group id
 * or a requirement may be a function of the request, called once per request; annotate
 * its `req` with the route's parameters (`Request<{ id: string }>`) to read them typed.
 *
 * @example
 * ```ts
 * const staffOnly = guard.requireGroup('fc:org:example.org', 'admin')
 * const courseAdmins = guard.requireGroup((req: Request<{ id: string }>) => `fc:fs:fs:emne:example.org:${req.params.id}:1`, 'admin')
 * ```
 */
export interface ExpressGuard extends Omit<Guards<ExpressGuardHandler, ExpressGuardHandler, Request>, 'requireGroup' | 'require'> {
  /**
   * Active membership of `groupId` with at least `role` (default any role). `groupId` may
   * be a function of the request, called once per request: an id it returns that
   * `assertGroupId` refuses (empty, too long, control characters, not a string) is a 403
   * `forbidden` without a call.
   */
  requireGroup<P = ParamsDictionary>(groupId: string | ((req: Request<P>) => string), role?: string): ExpressGuardHandler
  /**
   * Any requirement built with `group`, `anyOf`, `allOf`, `groupOfType`, `where`; or a
   * function of the request that builds one, called once per request (a group id its
   * `group()` refuses is a 403 `forbidden` without a call; any other error it throws is a 500).
   */
  require<P = ParamsDictionary>(requirement: Requirement | ((req: Request<P>) => Requirement)): ExpressGuardHandler
}

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
  const flow = createGuardFlow(options, express)
  // Express 4 ignores what a middleware returns, and Express 5 only listens for a rejection
  // the flow never gives: every outcome is settled through `res` or `next`.
  const guards = createGuards<RequestHandler, RequestHandler, Request>(
    flow.core,
    (requirement: Requirement | RequirementOf<Request>, optional: boolean): RequestHandler => {
      const step = flow.guard(requirement, optional)
      return (req, res, next) => {
        void step(req, res, next)
      }
    },
  )
  // The handlers are plain Express middleware; their type only lets the route's parameters through.
  return guards as unknown as ExpressGuard
}

/** Express's input and output. */
const express: FrameworkIO<Request, Response, NextFunction, void> = {
  authorization: (req) => authorizationOf(req),
  accept: (req) => req.headers.accept,
  allow(context, req, _res, next) {
    // authenticate({ optional: true }) without credentials: on, with no `req.voot`.
    if (context !== undefined) setVoot(req, context)
    next()
  },
  respond({ error, answer }, _req, res, next) {
    // A response already under way cannot take the answer: Express's error handling ends it.
    if (res.headersSent) next(error)
    else res.status(answer.status).set(answer.headers).send(answer.text)
  },
  fail(error, _req, _res, next) {
    next(error)
  },
}

/**
 * `VootGuard`: the Nest guard that enforces the voot decorators of a route.
 *
 * @module
 */
import { HttpException, Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common'
import { HttpAdapterHost, Reflector } from '@nestjs/core'
import { AUTHENTICATED, isAnonymous, type VootContext } from '../../src/adapter-kit.js'
import type { VootError } from '../../src/index.js'
import { VOOT_GUARD_CORE, type NestGuardCore, type NestHttpRequest } from './core.js'
import { OPTIONAL_SIGN_IN, routeRequirement, type RouteRequirement } from './decorators.js'
import { setVoot } from '../../src/guard/request-voot.js'

/**
 * Allows a request when the route's voot requirements hold (its class's and its method's
 * together), and when there are none, when it carries a valid personal token, unless the
 * route is `Public()`. Use it per controller (`@UseGuards(VootGuard)`) or for the whole app
 * (`{ provide: APP_GUARD, useClass: VootGuard }`).
 *
 * A refusal is an `HttpException` whose response is the contract's JSON body, its
 * `WWW-Authenticate` / `Retry-After` set on the response through the platform's adapter,
 * and its `cause` the `VootError` (with `code`, `status`, `headers`, `expose`).
 *
 * @example
 * ```ts
 * @UseGuards(VootGuard)
 * @RequireGroup('fc:org:example.org')
 * @Controller('staff')
 * export class StaffController {}
 * ```
 */
export class VootGuard implements CanActivate {
  // Per controller, then per handler: a handler inherited by two controllers may carry
  // different class requirements in each.
  readonly #requirements = new WeakMap<Function, WeakMap<Function, RouteRequirement>>()

  constructor(
    private readonly nest: NestGuardCore,
    private readonly reflector: Reflector,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    let requirement = this.requirementOf(context.getClass(), context.getHandler())
    if (requirement === null) return true
    // Fail closed: only HTTP requests carry the token this guard reads.
    if (context.getType() !== 'http') return false
    const http = context.switchToHttp()
    const request = http.getRequest<NestHttpRequest & { voot?: VootContext }>()
    const { core, credentialsOf } = this.nest
    const credentials = credentialsOf(request)
    if (requirement === OPTIONAL_SIGN_IN) {
      // Authenticated({ optional: true }) without credentials: on, with no `voot`.
      if (isAnonymous(credentials)) return true
      requirement = AUTHENTICATED
    }
    // Warm cache: decided synchronously, no promise per request.
    const result = core.authorizeNow(credentials, requirement)
    if (!(result instanceof Promise)) {
      setVoot(request, result)
      return true
    }
    return result.then(
      (voot) => {
        setVoot(request, voot)
        return true
      },
      (error: unknown) => {
        throw this.refusal(error, http.getResponse())
      },
    )
  }

  private requirementOf(controller: Function, handler: Function): RouteRequirement {
    let handlers = this.#requirements.get(controller)
    if (handlers === undefined) this.#requirements.set(controller, (handlers = new WeakMap()))
    let requirement = handlers.get(handler)
    if (requirement === undefined) {
      requirement = routeRequirement(this.reflector, handler, controller)
      if (requirement !== null && requirement !== OPTIONAL_SIGN_IN) this.nest.core.prepare(requirement)
      handlers.set(handler, requirement)
    }
    return requirement
  }

  /** The contract's answer as an `HttpException`, or the error itself when it is a bug (500). */
  private refusal(error: unknown, response: unknown): unknown {
    const { core } = this.nest
    const answer = core.answer(error)
    if (answer === undefined) return error
    // Delegated, only the protocol's own headers are set; the app's filter owns the rest.
    const headers = core.delegateErrors ? (error as VootError).headers : answer.headers
    const adapter = this.adapterHost.httpAdapter
    for (const name in headers) {
      // The platform writes the JSON content type itself (Express and Fastify alike).
      if (name !== 'content-type') adapter.setHeader(response, name, headers[name] as string)
    }
    return new HttpException(answer.body, answer.status, { cause: error })
  }
}

Injectable()(VootGuard)
Inject(VOOT_GUARD_CORE)(VootGuard, undefined, 0)
Inject(Reflector)(VootGuard, undefined, 1)
Inject(HttpAdapterHost)(VootGuard, undefined, 2)

/**
 * `VootGuard`: the Nest guard that enforces the voot decorators of a route.
 *
 * @module
 */
import { Inject, Injectable, Optional, type CanActivate, type ExecutionContext } from '@nestjs/common'
import { HttpAdapterHost, Reflector } from '@nestjs/core'
import { VOOT_GUARD_CORE, type NestGuardCore, type NestGuardStep, type NestHttpRequest } from './core.js'
import { routeStep } from './decorators.js'
import { InvalidArgumentError } from '../../src/index.js'

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
  // different class requirements in each. `null`: the route is public.
  readonly #steps = new WeakMap<Function, WeakMap<Function, NestGuardStep | null>>()

  private readonly nest: NestGuardCore

  constructor(
    nest: NestGuardCore | undefined,
    private readonly reflector: Reflector,
    private readonly adapterHost: HttpAdapterHost,
  ) {
    // Optional to Nest's injector, so that the app is told what to do rather than which
    // injection token it lacks.
    if (nest === undefined || nest === null) {
      throw new InvalidArgumentError(
        "VootGuard needs VootGuardModule: import it once, in the root module: @Module({ imports: [VootGuardModule.forRoot({ baseUrl: 'https://groups-api.dataporten.no/groups' })] }) (or VootGuardModule.forRootAsync({ useFactory }) for options from ConfigService)",
      )
    }
    this.nest = nest
  }

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const step = this.stepOf(context.getClass(), context.getHandler())
    if (step === null) return true
    // Fail closed: only HTTP requests carry the token this guard reads.
    if (context.getType() !== 'http') return false
    const http = context.switchToHttp()
    return step(http.getRequest<NestHttpRequest>(), http.getResponse(), this.adapterHost.httpAdapter)
  }

  private stepOf(controller: Function, handler: Function): NestGuardStep | null {
    let handlers = this.#steps.get(controller)
    if (handlers === undefined) this.#steps.set(controller, (handlers = new WeakMap()))
    let step = handlers.get(handler)
    if (step === undefined) {
      step = routeStep(this.nest, this.reflector, handler, controller)
      handlers.set(handler, step)
    }
    return step
  }
}

Injectable()(VootGuard)
Inject(VOOT_GUARD_CORE)(VootGuard, undefined, 0)
Optional()(VootGuard, undefined, 0)
Inject(Reflector)(VootGuard, undefined, 1)
Inject(HttpAdapterHost)(VootGuard, undefined, 2)

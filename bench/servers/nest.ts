/**
 * A Nest 12 app (Express platform) under load, in its own process: a bare route, a route
 * guarded by `VootGuard`, and one behind a no-op guard (what any Nest guard costs), side by
 * side. Usage: `nest.ts '<ServerConfig JSON>'`. Decorators are applied as calls: the bench
 * is compiled without `experimentalDecorators`.
 *
 * @module
 */
import type { AddressInfo } from 'node:net'
import type { Server } from 'node:http'
import { Controller, Get, Injectable, Module, UseGuards, type CanActivate, type ExecutionContext } from '@nestjs/common'
import { NestFactory } from '@nestjs/core'
import { ExpressAdapter } from '@nestjs/platform-express'
import type { Express } from 'express'
import { RequireGroup, VOOT_GUARD_CORE, VootGuard, VootGuardModule, type NestGuardCore } from '../../adapters/nestjs/index.js'
import { ORG_ID } from '../../testing/index.js'
import type { ServerConfig, ServerReady } from './config.js'
import { burn } from './burn.js'
import { serveParent } from './ipc.js'
import { createTimings } from './timings.js'

const config = JSON.parse(process.argv[2] ?? '{}') as ServerConfig
const timings = createTimings()

class NoopGuard implements CanActivate {
  canActivate(): boolean {
    return true
  }
}
Injectable()(NoopGuard)

// The burn control (see burn.ts): what any guard doing the voot guard's amount of work costs here.
class BurnGuard implements CanActivate {
  canActivate(): boolean {
    burn()
    return true
  }
}
Injectable()(BurnGuard)

// The same guards, each timed inside the server (see timings.ts).
class TimedNoopGuard extends NoopGuard {
  readonly #timed = timings.guard('no-op middleware', () => super.canActivate())
  override canActivate(): boolean {
    return this.#timed(undefined) as boolean
  }
}
Injectable()(TimedNoopGuard)
class TimedVootGuard extends VootGuard {
  readonly #timed = timings.guard('voot-guard', (context: ExecutionContext) => super.canActivate(context))
  override canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    return this.#timed(context)
  }
}
Injectable()(TimedVootGuard)

class BenchController {
  bare() {
    return { ok: true }
  }
  guarded() {
    return { ok: true }
  }
  noop() {
    return { ok: true }
  }
  burn() {
    return { ok: true }
  }
  timedNoop() {
    return { ok: true }
  }
  timedGuarded() {
    return { ok: true }
  }
}
const route = (name: keyof BenchController, decorators: MethodDecorator[]): void => {
  const descriptor = Reflect.decorate(
    decorators,
    BenchController.prototype,
    name,
    Object.getOwnPropertyDescriptor(BenchController.prototype, name),
  )
  if (descriptor !== undefined) Object.defineProperty(BenchController.prototype, name, descriptor)
}
route('bare', [Get('bare')])
route('guarded', [Get('guarded'), UseGuards(VootGuard), RequireGroup(ORG_ID, 'admin')])
route('noop', [Get('noop'), UseGuards(NoopGuard)])
route('burn', [Get('burn'), UseGuards(BurnGuard)])
route('timedNoop', [Get('timed/noop'), UseGuards(TimedNoopGuard)])
route('timedGuarded', [Get('timed/guarded'), UseGuards(TimedVootGuard), RequireGroup(ORG_ID, 'admin')])
Controller()(BenchController)

// A Nest module is an empty class that its decorator describes.
// eslint-disable-next-line @typescript-eslint/no-extraneous-class
class BenchModule {}
Module({ imports: [VootGuardModule.forRoot({ baseUrl: config.baseUrl, realm: 'bench' })], controllers: [BenchController] })(BenchModule)

const adapter = new ExpressAdapter()
const instance = adapter.getInstance<Express>()
instance.disable('x-powered-by')
instance.set('etag', false)
// Nest's own documented way to pass options; its options type is a class only in name.
// eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment
const app = await NestFactory.create(BenchModule, adapter, { logger: false })
await app.listen(0, '127.0.0.1')
const server = app.getHttpServer() as Server
server.keepAliveTimeout = 60_000
const { core } = app.get<NestGuardCore>(VOOT_GUARD_CORE)

serveParent({ stats: () => core.resolver.stats(), timings: () => timings.summary() }, {
  port: (server.address() as AddressInfo).port,
} satisfies ServerReady)

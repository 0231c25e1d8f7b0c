/**
 * The contract tests' small app in NestJS, on the Express and the Fastify platform, guarded
 * by `VootGuard` as `APP_GUARD`, on a real server on 127.0.0.1:0.
 *
 * Written without decorator syntax (the repo's tsconfig has no `experimentalDecorators`):
 * `Reflect.decorate` applies Nest's decorators exactly as TypeScript's legacy emit does.
 */
import 'reflect-metadata'
import {
  Catch,
  Controller,
  Get,
  HttpException,
  Module,
  type ArgumentsHost,
  type ExceptionFilter,
  type INestApplication,
} from '@nestjs/common'
import { APP_GUARD, HttpAdapterHost, NestFactory } from '@nestjs/core'
import { ExpressAdapter } from '@nestjs/platform-express'
import { FastifyAdapter } from '@nestjs/platform-fastify'
import type { VootContext } from '../../src/adapter-kit.js'
import type { Requirement, VootError } from '../../src/index.js'
import {
  Authenticated,
  RequireAllGroups,
  RequireAnyGroup,
  RequireGroup,
  RequireVoot,
  Voot,
  VootGuard,
  VootGuardModule,
  type VootDecorator,
  type VootGuardModuleOptions,
} from '../../adapters/nestjs/index.js'
import { anonymousBody, type RunningApp } from './apps.js'

/** The Nest platforms the adapter runs on. */
export type NestPlatform = 'express' | 'fastify'

type Handler = (voot: VootContext) => Promise<unknown>

/**
 * Applies method decorators to `Class.prototype[name]` (set to `handler` first) the way
 * TypeScript's legacy decorator emit does; `Voot()` goes on the first parameter.
 */
export function defineRoute(Class: Function, name: string, handler: Handler, decorators: MethodDecorator[]): void {
  const prototype = Class.prototype as Record<string, unknown>
  Object.defineProperty(handler, 'name', { value: name })
  prototype[name] = handler
  Voot()(prototype, name, 0)
  const descriptor = Reflect.decorate(decorators, prototype, name, Object.getOwnPropertyDescriptor(prototype, name))
  if (descriptor !== undefined) Object.defineProperty(prototype, name, descriptor)
}

/** A controller whose routes (path -> voot decorators) answer what the contract tests read. */
export function createContractController(table: Record<string, VootDecorator[]>, onCall: () => void): Function {
  class ContractController {}
  for (const [path, decorators] of Object.entries(table)) {
    // `/maybe` (optional sign-in) may reach its handler without a context.
    const handler = async (voot: VootContext | undefined) => {
      onCall()
      if (voot === undefined) return anonymousBody(voot)
      const groups = await voot.groups()
      return { ok: true, reason: voot.decision.reason, groupCount: groups.length }
    }
    defineRoute(ContractController, path.slice(1), handler, [Get(path), ...decorators])
  }
  Controller()(ContractController)
  return ContractController
}

/** An app's own exception filter, to see what `errorHandling: 'delegate'` hands it. */
function createDelegatedFilter(delegated: unknown[], adapterHost: HttpAdapterHost): ExceptionFilter {
  class DelegatedFilter implements ExceptionFilter {
    catch(exception: unknown, host: ArgumentsHost): void {
      const error = (exception instanceof HttpException ? exception.cause : exception) as VootError
      delegated.push(error)
      // The guard already set WWW-Authenticate / Retry-After through the platform adapter.
      adapterHost.httpAdapter.reply(host.switchToHttp().getResponse(), { delegated: error.code }, error.status ?? 500)
    }
  }
  Catch()(DelegatedFilter)
  return new DelegatedFilter()
}

/** Starts a Nest app of `controllers` with `VootGuardModule` (sync, or an async module) and `VootGuard` as `APP_GUARD`. */
export async function startNestApplication(
  platform: NestPlatform,
  guardModule: ReturnType<typeof VootGuardModule.forRoot>,
  controllers: Function[],
  extra: { appGuard?: boolean; providers?: unknown[] } = {},
): Promise<INestApplication> {
  class AppModule {}
  Module({
    imports: [guardModule],
    controllers: controllers as never[],
    providers: [
      ...(extra.appGuard === false ? [] : [{ provide: APP_GUARD, useClass: VootGuard }]),
      ...((extra.providers ?? []) as never[]),
    ],
  })(AppModule)
  const adapter = platform === 'express' ? new ExpressAdapter() : new FastifyAdapter()
  // abortOnError: false, so that a bad configuration rejects instead of ending the process.
  const app = await NestFactory.create(AppModule, adapter, { logger: false, abortOnError: false, forceCloseConnections: true })
  return app
}

/** The contract app (see `startApp` in apps.ts) on a Nest platform. */
export async function startNestApp(
  platform: NestPlatform,
  table: Record<string, VootDecorator[]>,
  options: VootGuardModuleOptions,
): Promise<RunningApp> {
  const state = { handlerCalls: 0, delegated: [] as unknown[] }
  const controller = createContractController(table, () => state.handlerCalls++)
  const app = await startNestApplication(platform, VootGuardModule.forRoot(options), [controller])
  if (options.errorHandling === 'delegate') app.useGlobalFilters(createDelegatedFilter(state.delegated, app.get(HttpAdapterHost)))
  await app.listen(0, '127.0.0.1')
  const url = (await app.getUrl()).replace('[::1]', '127.0.0.1')
  return {
    url,
    get handlerCalls() {
      return state.handlerCalls
    },
    delegated: state.delegated,
    close: () => app.close(),
  }
}

/** The guard names of the other adapters, as Nest decorators: `routes()` in apps.ts builds the same table. */
export const NEST_DECORATORS = {
  requireGroup: (id: string, role?: string) => [RequireGroup(id, role)],
  requireAnyGroup: (ids: readonly string[], role?: string) => [RequireAnyGroup(ids, role)],
  requireAllGroups: (ids: readonly string[], role?: string) => [RequireAllGroups(ids, role)],
  require: (requirement: Requirement) => [RequireVoot(requirement)],
  authenticate: (options?: { optional: true }) => [Authenticated(options)],
}

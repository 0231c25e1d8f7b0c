/**
 * NestJS adapter (Nest 11 and 12, on `@nestjs/platform-express` and
 * `@nestjs/platform-fastify`): a module, a guard and route decorators over the
 * framework-agnostic core.
 *
 * @example
 * ```ts
 * import { APP_GUARD } from '@nestjs/core'
 * import { RequireGroup, Voot, VootGuard, VootGuardModule, type VootContext } from 'voot-guard/nestjs'
 *
 * @Controller('staff')
 * export class StaffController {
 *   @RequireGroup('fc:org:example.org', 'admin')
 *   @Get()
 *   staff(@Voot() voot: VootContext) {
 *     return { reason: voot.decision.reason }
 *   }
 * }
 *
 * @Module({
 *   imports: [VootGuardModule.forRoot({ baseUrl: 'https://groups-api.example.org/groups', realm: 'my-app' })],
 *   controllers: [StaffController],
 *   providers: [{ provide: APP_GUARD, useClass: VootGuard }],
 * })
 * export class AppModule {}
 * ```
 *
 * @module
 */
export {
  Authenticated,
  Public,
  RequireAllGroups,
  RequireAnyGroup,
  RequireGroup,
  RequireVoot,
  Voot,
  VOOT_PUBLIC,
  VOOT_REQUIREMENTS,
  type RouteParams,
  type VootDecorator,
} from './decorators.js'
export { VootGuard } from './guard.js'
export { VootGuardModule } from './module.js'
export { VOOT_GUARD_CORE, type NestGuardCore, type NestGuardStep, type NestHttpRequest, type VootGuardModuleOptions } from './core.js'
export type { FoundToken, GuardOptions, VootContext } from '../../src/adapter-kit.js'

/**
 * `VootGuardModule`: configures voot-guard once for the whole Nest application.
 *
 * @module
 */
import { ConfigurableModuleBuilder, Global, Inject, Module, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common'
import { DiscoveryModule, DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core'
import { createNestGuardCore, VOOT_GUARD_CORE, type NestGuardCore, type VootGuardModuleOptions } from './core.js'
import { routeStep } from './decorators.js'

const { ConfigurableModuleClass, MODULE_OPTIONS_TOKEN } = new ConfigurableModuleBuilder<VootGuardModuleOptions>({
  moduleName: 'VootGuard',
})
  .setClassMethodName('forRoot')
  .build()

/**
 * The module behind `VootGuard`: `forRoot(options)`, or `forRootAsync({ imports, inject,
 * useFactory })` for options that come from other providers (`ConfigService`). Global:
 * import it once, in the root module. Options are validated when the module is built, and
 * so is every voot decorator of every controller (roles against the resolver's `roles`),
 * so a mistake stops the app at start-up rather than at a request. A resolver the module
 * created is closed on `app.close()`.
 *
 * @example
 * ```ts
 * @Module({
 *   imports: [VootGuardModule.forRoot({ baseUrl: 'https://groups-api.example.org/groups' })],
 *   providers: [{ provide: APP_GUARD, useClass: VootGuard }],
 * })
 * export class AppModule {}
 * ```
 */
export class VootGuardModule extends ConfigurableModuleClass implements OnModuleInit, OnModuleDestroy {
  constructor(
    private readonly nest: NestGuardCore,
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {
    super()
  }

  onModuleInit(): void {
    for (const { metatype } of this.discovery.getControllers()) {
      if (typeof metatype !== 'function') continue
      const prototype = metatype.prototype as Record<string, unknown>
      for (const name of this.scanner.getAllMethodNames(prototype)) {
        const handler = prototype[name]
        if (typeof handler !== 'function') continue
        // Built and dropped: what matters is that a mistake stops the app here, naming the route.
        routeStep(this.nest, this.reflector, handler, metatype)
      }
    }
  }

  async onModuleDestroy(): Promise<void> {
    if (this.nest.ownsResolver) await this.nest.core.resolver.close()
  }
}

Global()(VootGuardModule)
Module({
  imports: [DiscoveryModule],
  providers: [
    {
      provide: VOOT_GUARD_CORE,
      inject: [MODULE_OPTIONS_TOKEN],
      useFactory: (options: VootGuardModuleOptions) => createNestGuardCore(options),
    },
  ],
  exports: [VOOT_GUARD_CORE],
})(VootGuardModule)
Inject(VOOT_GUARD_CORE)(VootGuardModule, undefined, 0)
Inject(DiscoveryService)(VootGuardModule, undefined, 1)
Inject(MetadataScanner)(VootGuardModule, undefined, 2)
Inject(Reflector)(VootGuardModule, undefined, 3)

/**
 * NestJS example: routes guarded by group membership, with `VootGuard` for the whole app.
 *
 * Nest's decorators are TypeScript's legacy decorators: this folder's tsconfig.json turns on
 * `experimentalDecorators` (and `emitDecoratorMetadata`, which Nest apps usually have);
 * voot-guard itself needs neither. Run it on its own (tsx needs the tsconfig named):
 *   VOOT_BASE_URL=https://groups-api.example.org/groups npx tsx --tsconfig examples/nestjs/tsconfig.json examples/nestjs/app.ts
 *
 * Listens on http://127.0.0.1:3000 (set PORT for another port).
 */
import 'reflect-metadata'
import { Controller, Get, Module, type DynamicModule, type INestApplication, type Type } from '@nestjs/common'
import { APP_GUARD, NestFactory } from '@nestjs/core'
import { pathToFileURL } from 'node:url'
import { Public, RequireGroup, Voot, VootGuard, VootGuardModule, type VootContext, type VootGuardModuleOptions } from 'voot-guard/nestjs'
import { FEIDE_GROUPS, type ExampleGroups } from '../example-groups.js'

/**
 * The app's controllers, their routes asking for the `required` groups (Feide's unless
 * given). The decorators take the group ids when the classes are made, so the classes are
 * made here, once per app.
 */
export function controllersFor(required: ExampleGroups = FEIDE_GROUPS): Type[] {
  @Controller('api')
  class ApiController {
    // No voot decorator: VootGuard as APP_GUARD asks for a valid personal token (secure by default).
    @Get('me')
    async me(@Voot() voot: VootContext) {
      const groups = await voot.groups()
      return { groups: groups.map((g) => ({ id: g.id, role: g.membership.basic })) }
    }

    // Employees of example.org by default. NB: on fc:org groups `admin` means *employee*, not administrator.
    @RequireGroup(required.staff, required.staffRole)
    @Get('staff')
    staff(@Voot() voot: VootContext) {
      return { message: 'Hello, colleague', decision: voot.decision }
    }

    // Anyone enrolled in INF1000 (any role).
    @RequireGroup(required.course)
    @Get('inf1000')
    inf1000() {
      return { message: 'Welcome to INF1000' }
    }

    @Public()
    @Get('health')
    health() {
      return { ok: true }
    }
  }

  /** Every route here needs membership of example.org (by default); a method's requirement adds to it. */
  @RequireGroup(required.staff)
  @Controller('api/courses')
  class CoursesController {
    // Members of example.org who are also enrolled in INF1000 (any role).
    @RequireGroup(required.course)
    @Get('inf1000')
    inf1000() {
      return { message: 'Welcome to INF1000, member of example.org' }
    }
  }

  return [ApiController, CoursesController]
}

@Module({ providers: [{ provide: APP_GUARD, useClass: VootGuard }] })
export class AppModule {
  /**
   * The app for one group service (`baseUrl` WITH its /groups prefix), with any further
   * guard `options`, its routes asking for `groups`.
   */
  static forGroupService(baseUrl: string, options: Partial<VootGuardModuleOptions> = {}, groups?: ExampleGroups): DynamicModule {
    // One VootGuardModule (one resolver, one cache) for the whole app. With ConfigService:
    // VootGuardModule.forRootAsync({ imports: [ConfigModule], inject: [ConfigService],
    //   useFactory: (config: ConfigService) => ({ baseUrl: config.getOrThrow('VOOT_BASE_URL') }) })
    return {
      module: AppModule,
      controllers: controllersFor(groups),
      imports: [VootGuardModule.forRoot({ baseUrl, realm: 'voot-guard-example', ...options })],
    }
  }
}

/**
 * Builds the app, not yet listening; `options` go to the guard (the demo's
 * `npm start -- --framework nestjs --redis` passes a shared cache tier here), `groups` are
 * the groups the routes ask for (Feide's unless given).
 */
export function createApp(
  baseUrl: string,
  options: Partial<VootGuardModuleOptions> = {},
  groups?: ExampleGroups,
): Promise<INestApplication> {
  return NestFactory.create(AppModule.forGroupService(baseUrl, options, groups), { logger: ['error', 'warn'] })
}

// Started directly (not imported by a test): listen on PORT.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const baseUrl = process.env.VOOT_BASE_URL
  if (baseUrl === undefined) throw new Error('Set VOOT_BASE_URL to the group service address (with /groups)')
  const port = Number(process.env.PORT ?? 3000)
  const app = await createApp(baseUrl)
  await app.listen(port, '127.0.0.1')
  console.log(`listening on http://127.0.0.1:${port}`)
}

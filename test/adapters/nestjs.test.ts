/**
 * What only the NestJS adapter has: the module (forRoot, forRootAsync), VootGuard as
 * APP_GUARD (secure by default, Public()), class and method requirements together, the
 * Voot() parameter, checks when routes are declared and when the module is built. On real
 * Nest apps (Express and Fastify platforms) against the emulator. The HTTP contract itself
 * is in adapters-contract.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { request } from 'undici'
import { Controller, Get, Module, UseGuards, type INestApplication } from '@nestjs/common'
import { APP_GUARD, HttpAdapterHost, NestFactory, Reflector } from '@nestjs/core'
import { ExpressAdapter } from '@nestjs/platform-express'
import { FastifyAdapter } from '@nestjs/platform-fastify'
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host.js'
import { ADHOC_GROUP_ID, ORG_ID, startEmulator, type Emulator } from '../../testing/index.js'
import { createMembershipResolver, group } from '../../src/index.js'
import {
  Authenticated,
  Public,
  RequireAllGroups,
  RequireAnyGroup,
  RequireGroup,
  RequireVoot,
  VOOT_GUARD_CORE,
  VootGuard,
  VootGuardModule,
  type NestGuardCore,
  type VootContext,
  type VootDecorator,
} from '../../adapters/nestjs/index.js'
import { defineRoute, startNestApplication, type NestPlatform } from '../support/apps-nest.js'

let emulator: Emulator
beforeAll(async () => {
  emulator = await startEmulator()
})
afterAll(async () => {
  await emulator.close()
})

type Route = [path: string, decorators: MethodDecorator[]]

/** A controller whose routes answer `{ reason }`, or `{ voot: null }` when no guard ran. */
function controller(classDecorators: ClassDecorator[], routes: Route[]): Function {
  class TestController {}
  for (const [path, decorators] of routes) {
    const handler = async (voot?: VootContext) => (voot === undefined ? { voot: null } : { reason: voot.decision.reason })
    defineRoute(TestController, path.replace(/\W/g, '_') || 'index', handler, [Get(path), ...decorators])
  }
  Reflect.decorate(classDecorators, TestController)
  return TestController
}

async function listen(app: INestApplication): Promise<string> {
  await app.listen(0, '127.0.0.1')
  return (await app.getUrl()).replace('[::1]', '127.0.0.1')
}

async function get(url: string, token?: string) {
  const response = await request(url, { headers: token === undefined ? {} : { authorization: `Bearer ${token}` } })
  const text = await response.body.text()
  return {
    status: response.statusCode,
    headers: response.headers,
    text,
    json: text ? (JSON.parse(text) as Record<string, unknown>) : undefined,
  }
}

describe.each<NestPlatform>(['express', 'fastify'])('Nest on %s', (platform) => {
  let app: INestApplication
  let url: string

  beforeAll(async () => {
    const open = controller(
      [Controller('open')],
      [
        ['default', []],
        ['public', [Public()]],
        ['member', [RequireGroup(ORG_ID)]],
      ],
    )
    const health = controller([Controller('health'), Public()], [['', []]])
    // A class requirement and a method requirement: both hold.
    const staff = controller(
      [Controller('staff'), RequireGroup(ORG_ID)],
      [
        ['any', []],
        ['owner', [RequireGroup(ADHOC_GROUP_ID, 'owner')]],
        ['two', [RequireGroup(ADHOC_GROUP_ID), RequireAllGroups([ADHOC_GROUP_ID])]],
      ],
    )
    const employees = controller([Controller('employees'), RequireGroup(ORG_ID, 'admin')], [['adhoc', [RequireAnyGroup([ADHOC_GROUP_ID])]]])
    // Two decorators on one method: both hold too.
    const pair = controller([Controller('pair')], [['both', [RequireGroup(ORG_ID), RequireVoot(group(ADHOC_GROUP_ID, 'owner'))]]])
    // Optional sign-in for every route of a class.
    const welcome = controller([Controller('welcome'), Authenticated({ optional: true })], [['', []]])
    app = await startNestApplication(platform, VootGuardModule.forRoot({ baseUrl: emulator.baseUrl, realm: 'nest' }), [
      open,
      health,
      staff,
      employees,
      pair,
      welcome,
    ])
    url = await listen(app)
  })
  afterAll(async () => {
    await app.close()
  })

  it('treats a route without a voot decorator as Authenticated() (secure by default)', async () => {
    const none = await get(`${url}/open/default`)
    expect(none.status).toBe(401)
    expect(none.headers['www-authenticate']).toBe('Bearer realm="nest"')
    expect((await get(`${url}/open/default`, emulator.issueToken('erin'))).json).toEqual({ reason: 'authenticated' })
    expect((await get(`${url}/open/default`, 'not-a-known-token')).status).toBe(401)
  })

  it('lets Public() routes and controllers through without a token, with no VootContext', async () => {
    expect(await get(`${url}/open/public`)).toMatchObject({ status: 200, json: { voot: null } })
    expect(await get(`${url}/health`)).toMatchObject({ status: 200, json: { voot: null } })
  })

  it('lets a request without credentials through Authenticated({ optional: true }) with no VootContext, and no other', async () => {
    expect(await get(`${url}/welcome`)).toMatchObject({ status: 200, json: { voot: null } })
    expect((await get(`${url}/welcome`, emulator.issueToken('erin'))).json).toEqual({ reason: 'authenticated' })
    const refused = await get(`${url}/welcome`, 'not-a-known-token')
    expect(refused.status).toBe(401)
    expect(refused.headers['www-authenticate']).toBe('Bearer realm="nest", error="invalid_token"')
    expect((await get(`${url}/welcome`, 'abc$def')).status).toBe(400)
  })

  it('hands the VootContext to the handler through Voot()', async () => {
    expect((await get(`${url}/open/member`, emulator.issueToken('bob'))).json).toEqual({ reason: 'member' })
    expect((await get(`${url}/open/member`, emulator.issueToken('erin'))).status).toBe(403)
  })

  it('combines a class requirement with a method requirement: both must hold', async () => {
    const alice = emulator.issueToken('alice')
    const bob = emulator.issueToken('bob')
    expect((await get(`${url}/staff/any`, bob)).status).toBe(200)
    expect((await get(`${url}/staff/any`, emulator.issueToken('erin'))).status).toBe(403)
    // bob meets the class (org member) but not the method (owner of the ad-hoc group).
    expect((await get(`${url}/staff/owner`, bob)).status).toBe(403)
    expect((await get(`${url}/staff/owner`, alice)).status).toBe(200)
    expect((await get(`${url}/staff/two`, bob)).status).toBe(200)
    // bob meets the method (ad-hoc member) but not the class (employee).
    expect((await get(`${url}/employees/adhoc`, bob)).status).toBe(403)
    expect((await get(`${url}/employees/adhoc`, alice)).status).toBe(200)
    expect((await get(`${url}/pair/both`, bob)).status).toBe(403)
    expect((await get(`${url}/pair/both`, alice)).status).toBe(200)
  })

  it('puts no token in any response', async () => {
    const tokens = ['secret-unknown-token-4711', emulator.issueToken('bob'), emulator.issueToken('alice')]
    const fault = emulator.faults.add({ kind: 'status', status: 500 }, { token: tokens[2]! })
    for (const token of tokens) {
      const res = await get(`${url}/staff/owner`, token)
      expect(res.status).toBeGreaterThanOrEqual(400)
      expect(res.text + JSON.stringify(res.headers)).not.toContain(token)
    }
    emulator.faults.remove(fault)
    const malformed = await get(`${url}/staff/owner`, 'abc$secret-token')
    expect(malformed.status).toBe(400)
    expect(malformed.text + JSON.stringify(malformed.headers)).not.toContain('secret-token')
  })
})

describe('VootGuardModule', () => {
  it.each<NestPlatform>(['express', 'fastify'])(
    'VootGuard without the module says to import it, naming forRoot (issue #52 item 4, %s)',
    async (platform) => {
      const routes = controller([Controller('staff')], [['', [RequireGroup(ORG_ID)]]])
      UseGuards(VootGuard)(routes)
      class AppModule {}
      Module({ controllers: [routes as never] })(AppModule)
      const adapter = platform === 'express' ? new ExpressAdapter() : new FastifyAdapter()
      await expect(NestFactory.create(AppModule, adapter, { logger: false, abortOnError: false })).rejects.toThrow(
        /VootGuard needs VootGuardModule: import it once, in the root module: @Module\(\{ imports: \[VootGuardModule\.forRoot\(\{ baseUrl: /,
      )
      // As APP_GUARD too.
      class GlobalModule {}
      Module({ controllers: [routes as never], providers: [{ provide: APP_GUARD, useClass: VootGuard }] })(GlobalModule)
      const again = platform === 'express' ? new ExpressAdapter() : new FastifyAdapter()
      await expect(NestFactory.create(GlobalModule, again, { logger: false, abortOnError: false })).rejects.toThrow(
        /VootGuard needs VootGuardModule/,
      )
    },
  )

  it('names the controller and the method of a decorator with an unknown role (issue #52 item 4)', async () => {
    class CoursesController {}
    defineRoute(CoursesController, 'teachers', async () => ({}), [Get('teachers'), RequireGroup(ORG_ID, 'teacher')])
    Controller('courses')(CoursesController)
    const app = await startNestApplication('express', VootGuardModule.forRoot({ baseUrl: emulator.baseUrl }), [CoursesController])
    await expect(app.init()).rejects.toThrow(
      /^CoursesController\.teachers: Unknown role "teacher": the resolver's roles are member < manager < admin < owner/,
    )
    await app.close()
  })

  it('forRootAsync builds its options from injected providers', async () => {
    const CONFIG = Symbol('config')
    class ConfigModule {}
    Module({ providers: [{ provide: CONFIG, useValue: { groupsUrl: emulator.baseUrl, realm: 'async' } }], exports: [CONFIG] })(ConfigModule)
    const guardModule = VootGuardModule.forRootAsync({
      imports: [ConfigModule],
      inject: [CONFIG],
      useFactory: (config: { groupsUrl: string; realm: string }) => ({ baseUrl: config.groupsUrl, realm: config.realm }),
    })
    const app = await startNestApplication('express', guardModule, [controller([Controller('x')], [['member', [RequireGroup(ORG_ID)]]])])
    const url = await listen(app)
    expect((await get(`${url}/x/member`)).headers['www-authenticate']).toBe('Bearer realm="async"')
    expect((await get(`${url}/x/member`, emulator.issueToken('bob'))).json).toEqual({ reason: 'member' })
    await app.close()
  })

  it('guards one controller with UseGuards(VootGuard) and leaves the others alone', async () => {
    const guarded = controller(
      [Controller('guarded'), UseGuards(VootGuard)],
      [
        ['', []],
        ['admin', [RequireGroup(ORG_ID, 'admin')]],
      ],
    )
    const free = controller([Controller('free')], [['', []]])
    const app = await startNestApplication('fastify', VootGuardModule.forRoot({ baseUrl: emulator.baseUrl }), [guarded, free], {
      appGuard: false,
    })
    const url = await listen(app)
    expect((await get(`${url}/guarded`)).status).toBe(401)
    expect((await get(`${url}/guarded/admin`, emulator.issueToken('bob'))).status).toBe(403)
    expect((await get(`${url}/guarded/admin`, emulator.issueToken('alice'))).json).toEqual({ reason: 'member' })
    expect((await get(`${url}/free`)).json).toEqual({ voot: null })
    await app.close()
  })

  it('keeps a parent controller class requirement in a subclass that adds its own', async () => {
    class BaseController {}
    RequireGroup(ORG_ID, 'admin')(BaseController)
    class ChildController extends BaseController {}
    defineRoute(ChildController, 'route', async (voot) => ({ reason: voot.decision.reason }), [Get('route')])
    Reflect.decorate([Controller('child'), RequireGroup(ADHOC_GROUP_ID)], ChildController)
    const app = await startNestApplication('express', VootGuardModule.forRoot({ baseUrl: emulator.baseUrl }), [ChildController])
    const url = await listen(app)
    // bob is in the ad-hoc group (the subclass's requirement) but no employee (the parent's).
    expect((await get(`${url}/child/route`, emulator.issueToken('bob'))).status).toBe(403)
    expect((await get(`${url}/child/route`, emulator.issueToken('alice'))).status).toBe(200)
    await app.close()
  })

  it('validates decorator arguments where they are declared', () => {
    expect(() => RequireGroup('..')).toThrow(/refused|group id/i)
    expect(() => RequireGroup(ORG_ID, '')).toThrow(/role/)
    expect(() => RequireAnyGroup([])).toThrow(/RequireAnyGroup\(\): groupIds must be a non-empty array/)
    expect(() => RequireAllGroups('fc:org:example.org' as unknown as string[])).toThrow(/RequireAllGroups/)
    expect(() => RequireVoot({ kind: 'group', groupId: ORG_ID } as never)).toThrow(/RequireVoot/)
  })

  it.each<[string, () => VootDecorator[], RegExp]>([
    ['an unknown role', () => [RequireGroup(ORG_ID, 'emperor')], /Unknown role "emperor"/],
    ['Public() with a requirement', () => [Public(), RequireGroup(ORG_ID)], /Public\(\) and a voot requirement contradict/],
    [
      'Authenticated({ optional: true }) with a requirement',
      () => [Authenticated({ optional: true }), RequireGroup(ORG_ID)],
      /Authenticated\(\{ optional: true \}\) and a voot requirement contradict/,
    ],
    [
      'Authenticated({ optional: true }) with Public()',
      () => [Authenticated({ optional: true }), Public()],
      /Authenticated\(\{ optional: true \}\) and Public\(\) contradict/,
    ],
  ])('refuses to start with %s on a route', async (_label, decorators, message) => {
    const bad = controller([Controller('bad')], [['route', decorators()]])
    const app = await startNestApplication('express', VootGuardModule.forRoot({ baseUrl: emulator.baseUrl }), [bad])
    // Checked once the module is built: Nest calls onModuleInit in init() (or listen()).
    await expect(app.init()).rejects.toThrow(message)
    await app.close()
  })

  it('refuses Authenticated({ optional: true }) on a route whose class has a requirement, and misspelt options', async () => {
    const bad = controller([Controller('bad'), RequireGroup(ORG_ID)], [['route', [Authenticated({ optional: true })]]])
    const app = await startNestApplication('express', VootGuardModule.forRoot({ baseUrl: emulator.baseUrl }), [bad])
    await expect(app.init()).rejects.toThrow(/Authenticated\(\{ optional: true \}\) and a voot requirement contradict/)
    await app.close()
    expect(() => Authenticated({ optinal: true } as never)).toThrow(/optinal/)
    expect(() => Authenticated({ optional: 'yes' } as never)).toThrow(/optional: must be a boolean/)
  })

  it('refuses invalid options when the module is built, naming the option', async () => {
    await expect(startNestApplication('express', VootGuardModule.forRoot({ baseUrl: 'not a url' }), [])).rejects.toThrow(/baseUrl/)
    await expect(
      startNestApplication('express', VootGuardModule.forRoot({ baseUrl: emulator.baseUrl, realm: 'a\r\nb' }), []),
    ).rejects.toThrow(/realm/)
    const getToken = 42 as never
    await expect(startNestApplication('express', VootGuardModule.forRoot({ baseUrl: emulator.baseUrl, getToken }), [])).rejects.toThrow(
      /getToken/,
    )
  })

  it('reads the token with getToken when given', async () => {
    const app = await startNestApplication(
      'fastify',
      VootGuardModule.forRoot({ baseUrl: emulator.baseUrl, getToken: (request) => request.headers['x-token'] as string | undefined }),
      [controller([Controller('t')], [['', [Authenticated()]]])],
    )
    const url = await listen(app)
    const response = await request(`${url}/t`, { headers: { 'x-token': emulator.issueToken('erin') } })
    expect(await response.body.json()).toEqual({ reason: 'authenticated' })
    expect((await get(`${url}/t`, emulator.issueToken('erin'))).status).toBe(401)
    await app.close()
  })

  it('allows a warm request synchronously: canActivate returns true, not a promise', async () => {
    const routes = controller([Controller('w')], [['member', [RequireGroup(ORG_ID)]]])
    const app = await startNestApplication('express', VootGuardModule.forRoot({ baseUrl: emulator.baseUrl }), [routes])
    await app.init()
    const guard = new VootGuard(app.get<NestGuardCore>(VOOT_GUARD_CORE), app.get(Reflector), app.get(HttpAdapterHost))
    const req: { rawHeaders: string[]; headers: object; voot?: VootContext | undefined } = {
      rawHeaders: ['Authorization', `Bearer ${emulator.issueToken('bob')}`],
      headers: {},
    }
    const context = new ExecutionContextHost([req, {}], routes as never, (routes.prototype as Record<string, Function>).member!)
    const cold = guard.canActivate(context)
    expect(cold).toBeInstanceOf(Promise)
    expect(await cold).toBe(true)
    req.voot = undefined
    expect(guard.canActivate(context)).toBe(true)
    expect((req as { voot?: VootContext }).voot?.decision).toMatchObject({ allowed: true, reason: 'member' })
    // Fail closed outside HTTP (GraphQL, WebSockets, microservices): no token to read there.
    context.setType('rpc')
    expect(guard.canActivate(context)).toBe(false)
    await app.close()
  })

  it('respond mode sets the contract headers; delegate mode leaves Cache-Control and the body to the app filter', async () => {
    const routes = () => [controller([Controller('d')], [['', [RequireGroup(ORG_ID, 'admin')]]])]
    const responding = await startNestApplication('fastify', VootGuardModule.forRoot({ baseUrl: emulator.baseUrl }), routes())
    const delegating = await startNestApplication(
      'fastify',
      VootGuardModule.forRoot({ baseUrl: emulator.baseUrl, errorHandling: 'delegate' }),
      routes(),
    )
    const responded = await get(`${await listen(responding)}/d`)
    const delegated = await get(`${await listen(delegating)}/d`)
    expect(responded.headers['cache-control']).toBe('no-store')
    expect(delegated.headers['cache-control']).toBeUndefined()
    // Without a filter of the app's own, Nest's answers the same contract body either way.
    for (const res of [responded, delegated]) {
      expect(res).toMatchObject({ status: 401, json: { error: 'unauthorized' } })
      expect(res.headers['www-authenticate']).toBe('Bearer realm="voot-guard"')
    }
    await responding.close()
    await delegating.close()
  })

  it('closes the resolver it created when the app closes, and leaves a given one open', async () => {
    const app = await startNestApplication('express', VootGuardModule.forRoot({ baseUrl: emulator.baseUrl }), [])
    await app.init()
    const { core } = app.get<NestGuardCore>(VOOT_GUARD_CORE)
    await app.close()
    await expect(core.resolver.groups(emulator.issueToken('bob'))).rejects.toThrow()
    const resolver = createMembershipResolver({ baseUrl: emulator.baseUrl })
    const given = await startNestApplication('express', VootGuardModule.forRoot({ resolver }), [])
    await given.init()
    await given.close()
    expect(await resolver.groups(emulator.issueToken('bob'))).not.toHaveLength(0)
    await resolver.close()
  })
})

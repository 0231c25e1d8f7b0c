/**
 * The example apps the demo can serve (`npm start -- --framework fastify`), each as a
 * Node request listener for the demo's own server.
 *
 * @module
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http'
import { getRequestListener } from '@hono/node-server'
import { InvalidOptionError } from 'voot-guard'
import type { GuardOptions } from 'voot-guard/adapter-kit'
import { FEIDE_GROUPS, type ExampleGroups } from '../examples/example-groups.js'
import { createApp as createExpressApp } from '../examples/express/app.js'
import { createApp as createFastifyApp } from '../examples/fastify/app.js'
import { createHandler as createFetchHandler } from '../examples/fetch/app.js'
import { createApp as createHonoApp } from '../examples/hono/app.js'
import { createApp as createKoaApp } from '../examples/koa/app.js'

/**
 * A promise-returning handler as a `node:http` listener: the handler answers every request
 * itself (errors included), so nothing waits on the promise.
 */
function detached(handler: (req: IncomingMessage, res: ServerResponse) => unknown): RequestListener {
  return (req, res) => {
    void handler(req, res)
  }
}

/**
 * The frameworks the demo can serve; `express` is the default.
 */
export const DEMO_FRAMEWORKS = ['express', 'koa', 'fastify', 'hono', 'fetch', 'nestjs'] as const

/**
 * One of {@link DEMO_FRAMEWORKS}.
 */
export type DemoFramework = (typeof DEMO_FRAMEWORKS)[number]

/** How the guide names each example. */
const LABELS: Readonly<Record<DemoFramework, string>> = {
  express: 'Express',
  koa: 'Koa',
  fastify: 'Fastify',
  hono: 'Hono',
  fetch: 'Web-standard fetch',
  nestjs: 'NestJS',
}

// Imported by its address, so that the repository's type check (no experimentalDecorators)
// does not follow it; `npm start` loads it with examples/nestjs/tsconfig.json (demo/tsx.env).
const NEST_EXAMPLE = new URL('../examples/nestjs/app.ts', import.meta.url).href

interface NestExample {
  readonly createApp: (
    baseUrl: string,
    options: Pick<GuardOptions, 'sharedCache'>,
    groups: ExampleGroups,
  ) => Promise<{ init(): Promise<unknown>; getHttpAdapter(): { getInstance(): unknown }; close(): Promise<void> }>
}

/**
 * The example of `framework` as a request listener, and its name for the guide; `options`
 * go to its guard (the shared tier of `--redis`); its routes ask for `groups`.
 *
 * @throws {@link InvalidOptionError} for a framework the demo does not know.
 */
export async function demoApp(
  framework: unknown,
  baseUrl: string,
  options: Pick<GuardOptions, 'sharedCache'> = {},
  groups: ExampleGroups = FEIDE_GROUPS,
): Promise<{ listener: RequestListener; example: string; close?: () => Promise<void> }> {
  if (!DEMO_FRAMEWORKS.includes(framework as DemoFramework)) {
    throw new InvalidOptionError('framework', `must be one of ${DEMO_FRAMEWORKS.join(', ')}`)
  }
  const name = framework as DemoFramework
  const example = `the ${LABELS[name]} example (examples/${name}/app.ts)`
  switch (name) {
    case 'express':
      return { listener: createExpressApp(baseUrl, options, groups), example }
    case 'koa':
      return { listener: detached(createKoaApp(baseUrl, options, groups).callback()), example }
    case 'fastify': {
      const app = await createFastifyApp(baseUrl, options, groups)
      await app.ready()
      // Fastify's router as a listener of the demo's server (app.listen would start its own).
      return { listener: (req, res) => app.routing(req, res), example }
    }
    case 'hono': {
      const app = createHonoApp(baseUrl, options, groups)
      return { listener: detached(getRequestListener((request) => app.fetch(request))), example }
    }
    case 'fetch':
      return { listener: detached(getRequestListener(createFetchHandler(baseUrl, options, groups))), example }
    case 'nestjs': {
      const { createApp } = (await import(NEST_EXAMPLE)) as NestExample
      const app = await createApp(baseUrl, options, groups)
      await app.init()
      // Nest on its Express platform: the Express instance is the listener.
      return { listener: app.getHttpAdapter().getInstance() as RequestListener, example, close: () => app.close() }
    }
  }
}

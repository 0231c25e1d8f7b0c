import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'
import SkipReasonsReporter from './test/support/skip-reasons-reporter.js'

const source = (path: string): string => fileURLToPath(new URL(path, import.meta.url))

export default defineConfig({
  resolve: {
    // Examples import the package by name, as users do; tests run them from source.
    alias: [
      // The package's `imports` as Node resolves them (the `node` condition), from source.
      { find: /^#transport$/, replacement: source('./src/client/transport-undici.ts') },
      { find: /^#digest$/, replacement: source('./src/resolver/store/digest-node.ts') },
      { find: /^voot-guard$/, replacement: source('./src/index.ts') },
      { find: /^voot-guard\/adapter-kit$/, replacement: source('./src/adapter-kit.ts') },
      { find: /^voot-guard\/express$/, replacement: source('./adapters/express/index.ts') },
      { find: /^voot-guard\/koa$/, replacement: source('./adapters/koa/index.ts') },
      { find: /^voot-guard\/fastify$/, replacement: source('./adapters/fastify/index.ts') },
      { find: /^voot-guard\/hono$/, replacement: source('./adapters/hono/index.ts') },
      { find: /^voot-guard\/fetch$/, replacement: source('./adapters/fetch/index.ts') },
      { find: /^voot-guard\/nestjs$/, replacement: source('./adapters/nestjs/index.ts') },
      { find: /^voot-guard\/testing$/, replacement: source('./testing/index.ts') },
      { find: /^voot-guard\/oauth$/, replacement: source('./oauth/index.ts') },
      { find: /^voot-guard\/redis$/, replacement: source('./redis/index.ts') },
      { find: /^voot-guard\/otel$/, replacement: source('./otel/index.ts') },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    // The default summary, then every skipped test and why (a suite skipped without its
    // install says which install).
    reporters: ['default', new SkipReasonsReporter()],
    // Servers in the tests listen on loopback; a generous timeout absorbs a slow CI machine
    // without hiding hangs (every upstream call in the library has its own deadline).
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
  },
})

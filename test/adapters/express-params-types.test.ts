/**
 * Typed route params survive a guard (issue 52): on Express 5, a handler after a guard keeps
 * what Express infers from the path. Checked by `npm run typecheck` (`expectTypeOf` fails
 * the compilation when a type differs), and run as a test so that the routes also work.
 */
import { createServer } from 'node:http'
import express, { type Request } from 'express'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest'
import { createGuard } from '../../adapters/express/index.js'
import { group } from '../../src/index.js'
import { startEmulator, type Emulator } from '../../testing/index.js'
import { closer, listen } from '../support/apps.js'

let emulator: Emulator
beforeAll(async () => {
  emulator = await startEmulator()
})
afterAll(async () => {
  await emulator.close()
})

describe('Express 5 route params after a guard', () => {
  it('are typed as Express infers them from the path, and reach the handler', async () => {
    const guard = createGuard({ baseUrl: emulator.baseUrl })
    const app = express()
    app.get('/courses/:id', guard.require(group('fc:fs:fs:emne:example.org:INF1000:1')), (req, res) => {
      expectTypeOf(req.params.id).toEqualTypeOf<string>()
      res.json({ id: req.params.id })
    })
    app.get(
      '/teach/:id/:part',
      guard.requireGroup((req: Request<{ id: string }>) => `fc:fs:fs:emne:example.org:${req.params.id}:1`),
      (req, res) => {
        expectTypeOf(req.params.id).toEqualTypeOf<string>()
        expectTypeOf(req.params.part).toEqualTypeOf<string>()
        res.json({ id: req.params.id, part: req.params.part })
      },
    )
    app.get('/plain/:id', guard.authenticate(), guard.requireGroup('fc:org:example.org'), (req, res) => {
      expectTypeOf(req.params).toEqualTypeOf<{ id: string }>()
      res.json({ id: req.params.id })
    })
    const server = createServer(app)
    const url = await listen(server)
    try {
      const authorization = `Bearer ${emulator.issueToken('bob')}`
      for (const [path, body] of [
        ['/courses/INF1000', { id: 'INF1000' }],
        ['/teach/INF1000/notes', { id: 'INF1000', part: 'notes' }],
        ['/plain/7', { id: '7' }],
      ] as const) {
        const response = await request(`${url}${path}`, { headers: { authorization } })
        expect(response.statusCode).toBe(200)
        expect(await response.body.json()).toEqual(body)
      }
    } finally {
      await closer(server)()
    }
  })
})

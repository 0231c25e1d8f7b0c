/**
 * A middleware's own time, measured inside the server: from the moment it is called to
 * the moment it hands on to the next one. Throughput ratios on a shared two-CPU machine
 * swing by ±20 % between identical rounds; this does not depend on how much CPU the
 * server got, so it shows a few microseconds that a throughput ratio cannot.
 *
 * Each sample includes two `performance.now()` calls and a closure; a timed no-op,
 * measured the same way, is the baseline to subtract.
 *
 * @module
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express'
import type { Context, Next } from 'koa'
import type { onRequestHookHandler } from 'fastify'
import type { MiddlewareHandler } from 'hono'

/** One route's samples, in microseconds. */
export interface TimingSummary {
  readonly count: number
  readonly p10: number
  readonly p50: number
  readonly p90: number
}

const CAPACITY = 400_000

/**
 * Samples per name, in ring buffers of {@link CAPACITY}.
 *
 * @example
 * ```ts
 * const timings = createTimings()
 * app.get('/timed/guard', timings.express('guard', guard.requireGroup(ORG_ID)), ok)
 * timings.summary() // { guard: { count, p10, p50, p90 } }
 * ```
 */
export interface Timings {
  express(name: string, middleware: RequestHandler): RequestHandler
  koa(name: string, middleware: (ctx: Context, next: Next) => Promise<unknown>): (ctx: Context, next: Next) => Promise<unknown>
  fastify(name: string, hook: onRequestHookHandler): onRequestHookHandler
  hono(name: string, middleware: MiddlewareHandler): MiddlewareHandler
  /** A guard (Nest's `canActivate`): timed until it answers, synchronously or through its promise. */
  guard<C>(name: string, canActivate: (context: C) => boolean | Promise<boolean>): (context: C) => boolean | Promise<boolean>
  /** Records one sample of `name` (ms), for spans that no single middleware covers. */
  record(name: string, ms: number): void
  /** The samples so far, then forgets them. */
  summary(): Record<string, TimingSummary>
}

/** Creates a {@link Timings}. */
export function createTimings(): Timings {
  const rings = new Map<string, { values: Float64Array; count: number }>()

  function record(name: string, ms: number): void {
    let ring = rings.get(name)
    if (ring === undefined) rings.set(name, (ring = { values: new Float64Array(CAPACITY), count: 0 }))
    ring.values[ring.count++ % CAPACITY] = ms * 1000
  }

  return {
    record,
    express: (name, middleware) => (req: Request, res: Response, next: NextFunction) => {
      const started = performance.now()
      middleware(req, res, (error?: unknown) => {
        record(name, performance.now() - started)
        next(error)
      })
    },
    koa: (name, middleware) => (ctx, next) => {
      const started = performance.now()
      return middleware(ctx, () => {
        record(name, performance.now() - started)
        return next()
      })
    },
    fastify: (name, hook) =>
      function (this: unknown, request, reply, done) {
        const started = performance.now()
        hook.call(this as never, request, reply, (error?: Error) => {
          record(name, performance.now() - started)
          done(error as never)
        })
      },
    hono: (name, middleware) => (c, next) => {
      const started = performance.now()
      return middleware(c, () => {
        record(name, performance.now() - started)
        return next()
      })
    },
    guard: (name, canActivate) => (context) => {
      const started = performance.now()
      const result = canActivate(context)
      if (typeof result === 'boolean') {
        record(name, performance.now() - started)
        return result
      }
      return result.then((allowed) => {
        record(name, performance.now() - started)
        return allowed
      })
    },
    summary() {
      const result: Record<string, TimingSummary> = {}
      for (const [name, ring] of rings) {
        const sorted = ring.values.slice(0, Math.min(ring.count, CAPACITY)).sort()
        const at = (q: number): number => sorted[Math.floor(q * (sorted.length - 1))] ?? Number.NaN
        result[name] = { count: ring.count, p10: at(0.1), p50: at(0.5), p90: at(0.9) }
      }
      rings.clear()
      return result
    },
  }
}

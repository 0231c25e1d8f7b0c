/**
 * The transport on Node: undici's `request` on a keep-alive `Pool` for the base URL's origin
 * (or the caller's `dispatcher`), with at most {@link MAX_CONCURRENT_CALLS} calls open.
 * Chosen by the `node` condition of the package's `imports` (`#transport`); no other
 * runtime loads this module.
 *
 * The calls are counted here (`call-slots.ts`) rather than left to the pool's queue, which
 * sends a queued request whenever a connection frees up, however little of its deadline is
 * left. A slot goes only to a call that may still be sent, and is held until undici is done
 * with the request (its body closed, or the request torn down with its connection). The
 * time to send is checked once more at the moment undici is about to write the request: a
 * new connection can take a while, and a request is not written once its time is over.
 *
 * @module
 */
import { Pool, request } from 'undici'
import type { Dispatcher } from 'undici'
import { raceAbort } from './abort-race.js'
import { createCallSlots } from './call-slots.js'
import { SendExpiredError } from './send-by.js'
import { MAX_CONCURRENT_CALLS, type CreateTransport, type UpstreamResponse } from './transport.js'

const ERROR_BODY_DRAIN_LIMIT = 64 * 1024

/**
 * Creates the undici transport of one groups client. Its own pool is closed by `close()`;
 * a caller-supplied dispatcher is left open.
 */
export const createTransport: CreateTransport = (settings) => {
  const ownPool = settings.dispatcher === undefined ? new Pool(settings.origin, { connections: MAX_CONCURRENT_CALLS }) : undefined
  const dispatcher: Dispatcher = settings.dispatcher ?? (ownPool as Pool)
  const slots = createCallSlots(MAX_CONCURRENT_CALLS)
  let closing: Promise<void> | undefined
  return {
    async request(url, headers, signal, sendBy) {
      const release = await slots.hold(signal, sendBy)
      const pending = request(url, {
        dispatcher: sentBy(dispatcher, sendBy),
        method: 'GET',
        headers,
        signal,
        // undici's redirect interceptor honours 0 as "do not follow", so a caller-supplied
        // dispatcher composed with it still never sends the token to a Location.
        ...({ maxRedirections: 0 } as object),
      })
      // The slot is given back when undici is done with the request: at the close of its
      // body, or when it rejects (having torn a sent request down, connection and all).
      pending.then((response) => {
        if (response.body.closed) release()
        else response.body.once('close', release)
      }, release)
      // A request still queued in a dispatcher (a caller's, with fewer connections) hears of
      // its signal only once a connection takes it: the caller does not wait for that.
      // A response that comes after the signal fired is drained and dropped.
      return undiciResponse(await raceAbort(pending, signal, () => signal.reason as Error, dropLate))
    },
    close() {
      if (ownPool === undefined) return Promise.resolve()
      closing ??= ownPool.close()
      return closing
    },
  }
}

function undiciResponse({ statusCode, headers, body }: Dispatcher.ResponseData): UpstreamResponse {
  return {
    status: statusCode,
    header(name) {
      const value = headers[name]
      return typeof value === 'string' ? value : undefined
    },
    decodesContent: false,
    async read(limit, tooLarge) {
      const chunks: Buffer[] = []
      let size = 0
      for await (const chunk of body as AsyncIterable<Buffer>) {
        size += chunk.length
        if (size > limit) throw tooLarge()
        chunks.push(chunk)
      }
      return Buffer.concat(chunks, size)
    },
    async drain() {
      try {
        await body.dump({ limit: ERROR_BODY_DRAIN_LIMIT })
      } catch {
        // The status already decides the outcome; a broken error body changes nothing.
      }
    },
    discard() {
      destroyBody(body)
    },
  }
}

/** Swallows the error a deliberately destroyed body emits. */
function ignoreError(): void {}

/* eslint-disable @typescript-eslint/no-deprecated -- `request()` hands the dispatcher undici's
   own handler, which has the (deprecated) callback interface; this passes that interface through. */
/**
 * `dispatcher`, except that a request whose time to be sent has passed by the moment undici
 * is about to write it (`onConnect`: its connection is ready, the headers go out next) is
 * refused with `SendExpiredError` instead. `request()` needs nothing of a dispatcher but
 * `dispatch`.
 */
function sentBy(dispatcher: Dispatcher, sendBy: number): Dispatcher {
  const dispatch = (options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean =>
    dispatcher.dispatch(options, {
      onConnect(abort, ...rest: unknown[]) {
        if (performance.now() > sendBy) {
          abort(new SendExpiredError())
          return
        }
        ;(handler.onConnect as (abort: (err?: Error) => void, ...rest: unknown[]) => void)(abort, ...rest)
      },
      onError: (error) => handler.onError?.(error),
      onUpgrade: (statusCode, headers, socket) => handler.onUpgrade?.(statusCode, headers, socket),
      onResponseStarted: () => handler.onResponseStarted?.(),
      onHeaders: (statusCode, headers, resume, statusText) => handler.onHeaders?.(statusCode, headers, resume, statusText) ?? true,
      onData: (chunk) => handler.onData?.(chunk) ?? true,
      onComplete: (trailers) => handler.onComplete?.(trailers),
      onBodySent: (chunkSize, totalBytesSent) => handler.onBodySent?.(chunkSize, totalBytesSent),
    })
  return { dispatch } as unknown as Dispatcher
}
/* eslint-enable @typescript-eslint/no-deprecated */

function dropLate(pending: Promise<Dispatcher.ResponseData>): void {
  void pending.then(dropResponse, ignoreError)
}

function dropResponse({ body }: Dispatcher.ResponseData): void {
  destroyBody(body)
}

/** Closes an unread body: it holds its connection (and the abort listener) until then. */
function destroyBody(body: Dispatcher.ResponseData['body']): void {
  if (body.readableEnded || body.destroyed) return
  // undici's body emits an AbortError when destroyed unread; with no listener that
  // would be an uncaught exception that takes the whole process down.
  body.on('error', ignoreError)
  body.destroy()
}

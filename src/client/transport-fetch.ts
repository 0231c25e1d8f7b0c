/**
 * The transport everywhere but Node (Cloudflare Workers, Vercel's Edge, Deno, Bun,
 * browsers): the runtime's global `fetch` with `redirect: 'manual'`, the call's signal, a
 * byte count while the body streams in, and at most {@link MAX_CONCURRENT_CALLS} calls in
 * flight. Chosen by the `workerd`, `edge-light`, `deno`, `bun`, `browser` and `default`
 * conditions of the package's `imports` (`#transport`); it imports nothing of Node's.
 *
 * @module
 */
import { InvalidOptionError } from '../errors.js'
import { createCallSlots } from './call-slots.js'
import { MAX_CONCURRENT_CALLS, type CreateTransport, type UpstreamResponse } from './transport.js'

/**
 * Creates the fetch transport of one groups client. After `close()`, new calls fail (as
 * they do on a closed undici pool); calls in flight finish.
 */
export const createTransport: CreateTransport = (settings) => {
  if (settings.dispatcher !== undefined) {
    throw new InvalidOptionError('dispatcher', 'is an undici dispatcher, for Node only: on this runtime calls go through the global fetch')
  }
  const slots = createCallSlots(MAX_CONCURRENT_CALLS)
  let closed = false
  return {
    async request(url, headers, signal, sendBy) {
      if (closed) throw new Error('The groups client is closed')
      const release = await slots.hold(signal, sendBy)
      try {
        // 'manual': a redirect comes back as the answer and is refused above; the token
        // never goes to its Location.
        const response = await fetch(url, { method: 'GET', headers, signal, redirect: 'manual' })
        return fetchResponse(response, release)
      } catch (err) {
        release()
        throw err
      }
    },
    close() {
      closed = true
      return Promise.resolve()
    },
  }
}

function fetchResponse(response: Response, release: () => void): UpstreamResponse {
  const body = response.body as ReadableStream<Uint8Array> | null
  // The slot is given back once the body is cancelled (the request torn down), not before:
  // until then the request may still be open at the service.
  const drop = (): void => {
    if (body === null || body.locked) {
      release()
      return
    }
    body.cancel().then(release, release)
  }
  return {
    // A browser hides the status of a redirect answered with 'manual' ('opaqueredirect',
    // status 0); 302 stands for it so that it is refused as every redirect is.
    status: response.type === 'opaqueredirect' ? 302 : response.status,
    header: (name) => response.headers.get(name) ?? undefined,
    decodesContent: true,
    async read(limit, tooLarge) {
      if (body === null) {
        release()
        return new Uint8Array(0)
      }
      const reader = body.getReader()
      const chunks: Uint8Array[] = []
      let size = 0
      try {
        for (;;) {
          const { done, value } = await reader.read()
          if (done) break
          size += value.byteLength
          if (size > limit) {
            await reader.cancel().catch(ignoreError)
            throw tooLarge()
          }
          chunks.push(value)
        }
      } finally {
        reader.releaseLock()
        release()
      }
      const whole = new Uint8Array(size)
      let at = 0
      for (const chunk of chunks) {
        whole.set(chunk, at)
        at += chunk.byteLength
      }
      return whole
    },
    drain() {
      drop()
      return Promise.resolve()
    },
    discard: drop,
  }
}

/** Swallows the rejection of cancelling a body that already failed. */
function ignoreError(): void {}

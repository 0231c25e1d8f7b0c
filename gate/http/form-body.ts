/**
 * A small `application/x-www-form-urlencoded` body, read within a byte limit and a
 * deadline: the only body the gate reads (a provider's back-channel Logout Token).
 *
 * @module
 */
import type { IncomingMessage } from 'node:http'

/** Why a body was not read. */
export type FormBodyProblem = 'type' | 'size' | 'time' | 'aborted'

/**
 * Reads the form body of `req`: its fields, or the problem (not a form, over `maxBytes`,
 * not complete within `timeout` ms, or cut off). A refused body is not read further: the
 * connection is closed after the answer.
 *
 * @example
 * ```ts
 * const form = await readFormBody(req, 16_384, 5_000)
 * if ('problem' in form) return invalid('...')
 * form.fields.get('logout_token')
 * ```
 */
export function readFormBody(
  req: IncomingMessage,
  maxBytes: number,
  timeout: number,
): Promise<{ fields: URLSearchParams } | { problem: FormBodyProblem }> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase()
  if (type !== 'application/x-www-form-urlencoded') return Promise.resolve({ problem: 'type' })
  const declared = Number(req.headers['content-length'] ?? 0)
  if (declared > maxBytes) return Promise.resolve({ problem: 'size' })
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    let size = 0
    let settled = false
    const finish = (result: { fields: URLSearchParams } | { problem: FormBodyProblem }) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      req.off('data', onData)
      if ('problem' in result) req.pause()
      resolve(result)
    }
    const timer = setTimeout(() => finish({ problem: 'time' }), timeout)
    timer.unref()
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size > maxBytes) finish({ problem: 'size' })
      else chunks.push(chunk)
    }
    req.on('data', onData)
    req.once('end', () => finish({ fields: new URLSearchParams(Buffer.concat(chunks).toString('utf8')) }))
    req.once('aborted', () => finish({ problem: 'aborted' }))
    req.once('error', () => finish({ problem: 'aborted' }))
  })
}

/**
 * Reading an `application/x-www-form-urlencoded` request body, as the token endpoint and
 * the consent form receive them.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http'

/** Largest form body read, in bytes. */
const MAX_FORM_BYTES = 64 * 1024

/** The outcome of {@link readForm}. */
export type FormResult = { readonly ok: true; readonly params: Map<string, string> } | { readonly ok: false; readonly reason: string }

/**
 * Reads the request body as a form. Refuses another content type, a body over 64 KiB, and
 * a parameter that appears twice (RFC 6749 section 3.2).
 */
export async function readForm(req: IncomingMessage): Promise<FormResult> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase()
  if (type !== 'application/x-www-form-urlencoded') {
    req.resume()
    return { ok: false, reason: 'The body must be application/x-www-form-urlencoded' }
  }
  const body = await readBody(req)
  if (body === undefined) return { ok: false, reason: 'The body is too large' }
  const params = new Map<string, string>()
  for (const [name, value] of new URLSearchParams(body)) {
    if (params.has(name)) return { ok: false, reason: `The parameter ${name} appears more than once` }
    params.set(name, value)
  }
  return { ok: true, params }
}

/** The body as text, or `undefined` when it is over 64 KiB (the rest is drained, not kept). */
export function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (chunk: Buffer) => {
      if (size > MAX_FORM_BYTES) return
      size += chunk.length
      if (size > MAX_FORM_BYTES) resolve(undefined)
      else chunks.push(chunk)
    })
    req.on('end', () => resolve(size > MAX_FORM_BYTES ? undefined : Buffer.concat(chunks).toString('utf8')))
    req.on('error', reject)
  })
}

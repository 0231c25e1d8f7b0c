/**
 * An emulator answer as a value (status, headers, body) and the one function that writes
 * it, so route logic stays pure and faults can rewrite an answer before it is sent.
 *
 * @module
 */
import type { ServerResponse } from 'node:http'

/**
 * The content type of every JSON answer, as the real service sends it.
 */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8'

/**
 * A complete answer. `json` is kept next to the serialized `body` so that a fault can
 * reshape it.
 */
export interface Answer {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  /** Text is sent as UTF-8; bytes (an image) as they are. */
  readonly body: string | Buffer
  readonly json?: unknown
}

/**
 * A JSON answer with the real service's content type.
 */
export function jsonAnswer(status: number, json: unknown, headers: Readonly<Record<string, string>> = {}): Answer {
  return { status, headers: { 'content-type': JSON_CONTENT_TYPE, ...headers }, body: JSON.stringify(json), json }
}

/**
 * The `{"message": ...}` error answer the real service sends.
 */
export function messageAnswer(status: number, message: string, headers: Readonly<Record<string, string>> = {}): Answer {
  return jsonAnswer(status, { message }, headers)
}

/**
 * The answer to anything that threw.
 */
export const INTERNAL_ERROR: Answer = messageAnswer(500, 'Internal server error')

/**
 * The answer to an unknown route, an unknown or invisible group, or "not a member".
 */
export const NOT_FOUND: Answer = messageAnswer(404, 'Requested resource was not found')

/**
 * Writes the whole answer with a `Content-Length`.
 */
export function writeAnswer(res: ServerResponse, answer: Answer): void {
  const body = answerBytes(answer)
  res.writeHead(answer.status, { ...answer.headers, 'content-length': String(body.length) })
  res.end(body)
}

/**
 * The bytes of an answer's body as they go on the wire.
 */
export function answerBytes(answer: Answer): Buffer {
  return typeof answer.body === 'string' ? Buffer.from(answer.body, 'utf8') : answer.body
}

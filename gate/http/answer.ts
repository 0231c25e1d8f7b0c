/**
 * What the gate answers, and writing it. Error answers come from the guard core's HTTP
 * contract (`core.answer`), so the gate has the same statuses, challenges and bodies as
 * every framework guard.
 *
 * @module
 */
import type { ServerResponse } from 'node:http'
import type { HttpErrorAnswer } from '../../src/adapter-kit.js'

/** One answer: status, headers, and a body (JSON text) when there is one. */
export interface Answer {
  readonly status: number
  readonly headers: Readonly<Record<string, string | readonly string[]>>
  readonly body?: string
}

/** An answer from the contract's error answer, with extra headers. */
export function fromContract(
  answer: HttpErrorAnswer,
  extra?: Readonly<Record<string, string | readonly string[]>>,
  status?: number,
): Answer {
  return {
    status: status ?? answer.status,
    headers: extra === undefined ? answer.headers : { ...answer.headers, ...extra },
    body: answer.text,
  }
}

/**
 * The words of an error answer: its JSON body's `error_description` (or problem details'
 * `detail`), or `undefined` when it has none.
 *
 * @example
 * ```ts
 * errorDescriptionOf(fromContract(core.answer(error))) // 'This resource requires the role admin or higher in ...'
 * ```
 */
export function errorDescriptionOf(answer: Answer): string | undefined {
  try {
    const body = JSON.parse(answer.body ?? '{}') as { error_description?: unknown; detail?: unknown }
    const text = body.error_description ?? body.detail
    return typeof text === 'string' && text !== '' ? text : undefined
  } catch {
    // Not JSON: no words of its own.
    return undefined
  }
}

/** A JSON answer of the gate's own (sign-in errors, health). */
export function jsonAnswer(status: number, body: unknown, headers?: Readonly<Record<string, string | readonly string[]>>): Answer {
  return {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers },
    body: JSON.stringify(body),
  }
}

/** A redirect that stores nothing in caches. */
export function redirectAnswer(status: 302 | 303, location: string, setCookies: readonly string[] = []): Answer {
  return {
    status,
    headers: { location, 'cache-control': 'no-store', ...(setCookies.length === 0 ? {} : { 'set-cookie': setCookies }) },
  }
}

/** Writes `answer` to `res` (no body for HEAD). */
export function writeAnswer(res: ServerResponse, answer: Answer, head: boolean): void {
  // A flat list of names and values: Node writes it without building a header map.
  const headers: string[] = []
  for (const name in answer.headers) {
    const value = answer.headers[name] as string | readonly string[]
    if (typeof value === 'string') headers.push(name, value)
    else for (const each of value) headers.push(name, each)
  }
  const body = answer.body
  headers.push('content-length', body === undefined ? '0' : String(Buffer.byteLength(body)))
  res.writeHead(answer.status, headers)
  res.end(head || body === undefined ? undefined : body)
}

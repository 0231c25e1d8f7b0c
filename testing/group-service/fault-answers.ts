/**
 * How each fault reaches the wire: answers that replace the normal one, rewrites of the
 * normal answer, and the faults that misbehave at the socket level (resets, trickled and
 * oversized bodies).
 *
 * Everything that waits takes an `AbortSignal` that fires when the connection closes, so
 * `close()` never waits for a fault to finish.
 *
 * @module
 */
import { STATUS_CODES, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { answerBytes, JSON_CONTENT_TYPE, jsonAnswer, type Answer } from '../answer.js'
import type { Fault } from './faults.js'

/**
 * The answer a fault sends instead of the normal one, or `undefined` when the fault does
 * not replace the answer (latency, partial, and the faults handled at socket level).
 */
export function replacementAnswer(fault: Fault): Answer | undefined {
  switch (fault.kind) {
    case 'status':
      return {
        status: fault.status,
        headers: { 'content-type': JSON_CONTENT_TYPE, ...fault.headers },
        body: fault.body ?? JSON.stringify({ message: STATUS_CODES[fault.status] ?? 'Error' }),
      }
    case 'invalid-json':
      return { status: 200, headers: { 'content-type': JSON_CONTENT_TYPE }, body: '[{"id":"fc:org:example.org","displayName":' }
    case 'non-json':
      return {
        status: 200,
        headers: { 'content-type': 'text/html; charset=utf-8' },
        body: '<!DOCTYPE html>\n<html><head><title>Maintenance</title></head><body><h1>Down for maintenance</h1></body></html>\n',
      }
    case 'redirect':
      return { status: fault.status ?? 302, headers: { location: fault.location }, body: '' }
    default:
      return undefined
  }
}

/**
 * The normal answer's content in the wrong shape, with status 200: an object where an
 * array is due (`{"items": [...]}`) and an array where an object is due (`[{...}]`).
 */
export function wrongShape(normal: Answer, listDue: boolean): Answer {
  const content = normal.status === 200 ? normal.json : undefined
  if (listDue) return jsonAnswer(200, { items: Array.isArray(content) ? content : [] })
  return jsonAnswer(200, content === undefined ? [] : [content])
}

/**
 * Destroys the socket with a TCP RST, so the client sees `ECONNRESET`.
 */
export function resetConnection(socket: Socket): void {
  socket.resetAndDestroy()
}

/**
 * Sends the answer's headers with its full `Content-Length` and the first half of its body,
 * then closes the connection.
 */
export function writeTruncated(res: ServerResponse, answer: Answer): void {
  const body = answerBytes(answer)
  res.writeHead(answer.status, { ...answer.headers, 'content-length': String(body.length) })
  // A FIN rather than a RST: a RST could make the client's kernel drop the bytes already
  // sent, and the point is that the client sees headers and part of the body.
  res.write(body.subarray(0, Math.floor(body.length / 2)), () => res.socket?.destroy())
}

/**
 * Sends the answer with its body trickled at `bytesPerSecond`.
 */
export async function writeSlowly(res: ServerResponse, answer: Answer, bytesPerSecond: number, signal: AbortSignal): Promise<void> {
  const body = answerBytes(answer)
  res.writeHead(answer.status, { ...answer.headers, 'content-length': String(body.length) })
  // Ten chunks a second when the rate allows, else one byte per tick.
  const chunkSize = Math.max(1, Math.floor(bytesPerSecond / 10))
  const interval = (chunkSize / bytesPerSecond) * 1000
  for (let offset = 0; offset < body.length; offset += chunkSize) {
    if (offset > 0 && !(await pause(interval, signal))) return
    if (res.destroyed) return
    res.write(body.subarray(offset, offset + chunkSize))
  }
  res.end()
}

/**
 * Streams a valid JSON array of exactly `bytes` bytes (group-like elements, padded with
 * whitespace), chunked, without `Content-Length`, so a client must count what it reads.
 */
export async function writeOversized(res: ServerResponse, bytes: number, signal: AbortSignal): Promise<void> {
  res.writeHead(200, { 'content-type': JSON_CONTENT_TYPE })
  const element = (index: number): string =>
    JSON.stringify({ id: `fc:adhoc:padding-${String(index).padStart(8, '0')}`, displayName: 'Padding', type: 'voot:ad-hoc' })
  const elementLength = element(0).length
  const chunkLimit = 64 * 1024
  let remaining = bytes - 2 // for '[' and ']'
  let chunk = '['
  let index = 0
  while (remaining > 0) {
    const separator = index === 0 ? 0 : 1
    if (remaining >= elementLength + separator) {
      chunk += (separator === 1 ? ',' : '') + element(index)
      remaining -= elementLength + separator
      index += 1
    } else {
      chunk += ' '.repeat(remaining)
      remaining = 0
    }
    if (chunk.length >= chunkLimit) {
      if (!(await send(res, chunk, signal))) return
      chunk = ''
    }
  }
  if (!(await send(res, chunk + ']', signal))) return
  res.end()
}

/**
 * Waits `ms`; resolves `false` (without throwing) when `signal` fires first.
 */
export async function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return false
  if (ms <= 0) return true
  try {
    await sleep(ms, undefined, { signal })
    return true
  } catch {
    return false
  }
}

async function send(res: ServerResponse, chunk: string, signal: AbortSignal): Promise<boolean> {
  if (res.destroyed || signal.aborted) return false
  if (res.write(chunk)) return true
  await new Promise<void>((resolve) => {
    const done = (): void => {
      res.off('drain', done)
      signal.removeEventListener('abort', done)
      resolve()
    }
    res.on('drain', done)
    signal.addEventListener('abort', done)
  })
  return !res.destroyed && !signal.aborted
}

/**
 * A FastCGI authorizer listener: the records of the FastCGI 1.0 protocol (begin, params,
 * stdin, abort, management), one request at a time per connection, in the AUTHORIZER role
 * only (what Apache's mod_authnz_fcgi asks). Everything a peer sends is bounded: the
 * bytes of a request's params, the time to send them, the time to answer, the connections.
 * A peer that breaks the protocol loses its connection; it never gets an answer it did
 * not ask for.
 *
 * @module
 */
import { createServer, type Server, type Socket } from 'node:net'

/** A FastCGI request's params, and from where it came. */
export interface FastCgiRequest {
  /** The params; a name sent twice maps to `undefined` (ambiguous, never read). */
  readonly params: ReadonlyMap<string, string | undefined>
  /** The web server's address (the peer of the connection). */
  readonly remoteAddress: string | undefined
}

/** The CGI-style response of an authorizer: the text of its headers (with `Status:`) and the blank line, as FCGI_STDOUT. */
export type FastCgiAnswer = string

/** Answers one authorizer request. */
export type FastCgiAuthorizer = (request: FastCgiRequest) => FastCgiAnswer | Promise<FastCgiAnswer>

/**
 * Options of {@link createFastCgiServer}.
 *
 * @example
 * ```ts
 * createFastCgiServer({ authorize: () => 'Status: 200 OK\r\n\r\n', trusted: (address) => address === '127.0.0.1' })
 * ```
 */
export interface FastCgiServerOptions {
  readonly authorize: FastCgiAuthorizer
  /** Whether a peer may speak to the listener at all; an untrusted peer's connection is closed unread. */
  readonly trusted: (remoteAddress: string | undefined) => boolean
  /** What to answer when `authorize` fails or takes longer than `answerTimeout` (fail closed: a 503, never an allow). */
  readonly unavailable: FastCgiAnswer
  /** Most bytes of one request's params. Default 64 KiB (Apache sends a request's headers as params). */
  readonly maxParamsBytes?: number
  /** How long a peer has to send a whole request, and how long a kept connection may idle, in ms. Default 10 s. */
  readonly requestTimeout?: number
  /** How long an answer may take, in ms. Default 25 s (mod_authnz_fcgi gives up after 30 s). */
  readonly answerTimeout?: number
  /** Most open connections. Default 1024. */
  readonly maxConnections?: number
}

// Record types and values of the FastCGI 1.0 specification.
const VERSION = 1
const BEGIN_REQUEST = 1
const ABORT_REQUEST = 2
const END_REQUEST = 3
const PARAMS = 4
const STDIN = 5
const STDOUT = 6
const DATA = 8
const GET_VALUES = 9
const GET_VALUES_RESULT = 10
const UNKNOWN_TYPE = 11
const ROLE_AUTHORIZER = 2
const KEEP_CONN = 1
const REQUEST_COMPLETE = 0
const CANT_MPX_CONN = 1
const UNKNOWN_ROLE = 3
const HEADER_BYTES = 8
const MAX_CONTENT = 65_535

/** One record, as bytes: the header, the content, padding to a multiple of 8 (as the specification recommends). */
export function encodeRecord(type: number, requestId: number, content: Uint8Array = new Uint8Array(0)): Buffer {
  const padding = (8 - (content.length % 8)) % 8
  const record = Buffer.alloc(HEADER_BYTES + content.length + padding)
  record[0] = VERSION
  record[1] = type
  record.writeUInt16BE(requestId, 2)
  record.writeUInt16BE(content.length, 4)
  record[6] = padding
  record.set(content, HEADER_BYTES)
  return record
}

/** Name-value pairs as FastCGI encodes them (a length of 127 bytes or less in one byte, else in four). */
export function encodeNameValues(pairs: Iterable<readonly [string, string]>): Buffer {
  const parts: Buffer[] = []
  const length = (n: number) => {
    if (n < 128) return Buffer.from([n])
    const four = Buffer.alloc(4)
    four.writeUInt32BE((n | 0x80000000) >>> 0)
    return four
  }
  for (const [name, value] of pairs) {
    const nameBytes = Buffer.from(name, 'latin1')
    const valueBytes = Buffer.from(value, 'latin1')
    parts.push(length(nameBytes.length), length(valueBytes.length), nameBytes, valueBytes)
  }
  return Buffer.concat(parts)
}

/**
 * Decodes name-value pairs, or `undefined` when a length runs past the end. Names and
 * values are read as latin1, as `node:http` reads header values.
 */
export function decodeNameValues(bytes: Buffer): Map<string, string | undefined> | undefined {
  const pairs = new Map<string, string | undefined>()
  let at = 0
  const length = (): number | undefined => {
    if (at >= bytes.length) return undefined
    const first = bytes[at] as number
    if (first < 128) {
      at += 1
      return first
    }
    if (at + 4 > bytes.length) return undefined
    const n = bytes.readUInt32BE(at) & 0x7fffffff
    at += 4
    return n
  }
  while (at < bytes.length) {
    const nameLength = length()
    const valueLength = length()
    if (nameLength === undefined || valueLength === undefined || at + nameLength + valueLength > bytes.length) return undefined
    const name = bytes.toString('latin1', at, at + nameLength)
    const value = bytes.toString('latin1', at + nameLength, at + nameLength + valueLength)
    at += nameLength + valueLength
    // A name given twice is ambiguous: neither value is believed.
    pairs.set(name, pairs.has(name) ? undefined : value)
  }
  return pairs
}

/** The records that answer request `id`: its stdout, the end of its stdout, and the end of the request. */
function answerRecords(id: number, answer: FastCgiAnswer): Buffer {
  const bytes = Buffer.from(answer, 'latin1')
  const records: Buffer[] = []
  for (let at = 0; at < bytes.length; at += MAX_CONTENT) records.push(encodeRecord(STDOUT, id, bytes.subarray(at, at + MAX_CONTENT)))
  records.push(encodeRecord(STDOUT, id), endRequest(id, REQUEST_COMPLETE))
  return Buffer.concat(records)
}

function endRequest(id: number, protocolStatus: number): Buffer {
  const body = Buffer.alloc(8)
  body[4] = protocolStatus
  return encodeRecord(END_REQUEST, id, body)
}

/** The answer to FCGI_GET_VALUES: the variables asked for that this listener knows. */
function valuesResult(content: Buffer, maxConnections: number): Buffer {
  const asked = decodeNameValues(content) ?? new Map<string, string>()
  const known: Record<string, string> = {
    FCGI_MAX_CONNS: String(maxConnections),
    FCGI_MAX_REQS: String(maxConnections),
    FCGI_MPXS_CONNS: '0',
  }
  const pairs: [string, string][] = []
  for (const name of asked.keys()) if (known[name] !== undefined) pairs.push([name, known[name]])
  return encodeRecord(GET_VALUES_RESULT, 0, encodeNameValues(pairs))
}

/** The request under way on a connection. */
interface Current {
  readonly id: number
  readonly keepConn: boolean
  readonly params: Buffer[]
  paramsBytes: number
  /** Its params are complete and its answer is being made. */
  answering: boolean
  /** Aborted by the peer: the answer, when it comes, is dropped. */
  aborted: boolean
}

/**
 * Creates the listener (not yet listening).
 *
 * @example
 * ```ts
 * const server = createFastCgiServer({ authorize, trusted, unavailable: 'Status: 503 Service Unavailable\r\nRetry-After: 5\r\n\r\n' })
 * server.listen(4182, '127.0.0.1')
 * ```
 */
export function createFastCgiServer(options: FastCgiServerOptions): Server {
  const { authorize, trusted, unavailable } = options
  const maxParamsBytes = options.maxParamsBytes ?? 64 * 1024
  const requestTimeout = options.requestTimeout ?? 10_000
  const answerTimeout = options.answerTimeout ?? 25_000
  const maxConnections = options.maxConnections ?? 1024
  const server = createServer({ noDelay: true }, (socket) => serve(socket))
  server.maxConnections = maxConnections

  function serve(socket: Socket): void {
    if (!trusted(socket.remoteAddress)) {
      socket.destroy()
      return
    }
    let buffered: Buffer = Buffer.alloc(0)
    let current: Current | undefined
    // Until a request's params are complete, and while a kept connection idles: a deadline.
    let deadline: NodeJS.Timeout | undefined
    const arm = () => {
      clearTimeout(deadline)
      deadline = setTimeout(() => socket.destroy(), requestTimeout)
      deadline.unref()
    }
    arm()
    socket.on('error', () => socket.destroy())
    socket.on('close', () => clearTimeout(deadline))
    socket.on('data', (chunk: Buffer) => {
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk])
      // Complete records are taken off as they come: what stays buffered is less than one record (8 + 65535 + 255 bytes).
      while (buffered.length >= HEADER_BYTES && !socket.destroyed) {
        const version = buffered[0] as number
        const type = buffered[1] as number
        const id = buffered.readUInt16BE(2)
        const length = buffered.readUInt16BE(4)
        const padding = buffered[6] as number
        if (version !== VERSION) {
          fail()
          return
        }
        const total = HEADER_BYTES + length + padding
        if (buffered.length < total) break
        const content = buffered.subarray(HEADER_BYTES, HEADER_BYTES + length)
        buffered = buffered.subarray(total)
        record(type, id, content)
      }
    })

    function fail(): void {
      socket.destroy()
    }

    function write(bytes: Buffer): void {
      if (!socket.destroyed && socket.writable) socket.write(bytes)
    }

    function record(type: number, id: number, content: Buffer): void {
      if (id === 0) {
        // Management records: the listener's values; any other type is answered as unknown.
        if (type === GET_VALUES) write(valuesResult(content, maxConnections))
        else {
          const body = Buffer.alloc(8)
          body[0] = type
          write(encodeRecord(UNKNOWN_TYPE, 0, body))
        }
        return
      }
      if (type === BEGIN_REQUEST) {
        begin(id, content)
        return
      }
      // Records of a request that is not under way are ignored, as the specification says.
      if (current === undefined || id !== current.id) return
      switch (type) {
        case PARAMS:
          params(current, content)
          break
        case ABORT_REQUEST:
          current.aborted = true
          finish(current, endRequest(current.id, REQUEST_COMPLETE))
          break
        case STDIN:
        case DATA:
          // An authorizer reads no body (Apache sends none); whatever comes is dropped.
          break
        default:
          // Records only an application sends (stdout, end request, ...): not a web server.
          fail()
      }
    }

    function begin(id: number, content: Buffer): void {
      if (content.length !== 8) {
        fail()
        return
      }
      const role = content.readUInt16BE(0)
      const keepConn = ((content[2] as number) & KEEP_CONN) !== 0
      if (current !== undefined) {
        // One request at a time (FCGI_MPXS_CONNS is 0); the same id twice is a broken peer.
        if (id === current.id) {
          fail()
          return
        }
        write(endRequest(id, CANT_MPX_CONN))
        return
      }
      if (role !== ROLE_AUTHORIZER) {
        write(endRequest(id, UNKNOWN_ROLE))
        if (!keepConn) socket.end()
        return
      }
      current = { id, keepConn, params: [], paramsBytes: 0, answering: false, aborted: false }
      arm()
    }

    function params(request: Current, content: Buffer): void {
      if (request.answering) return
      if (content.length > 0) {
        request.paramsBytes += content.length
        if (request.paramsBytes > maxParamsBytes) {
          // Too large to read: answered as such, never decided on a part of it.
          request.answering = true
          finish(request, answerRecords(request.id, 'Status: 431 Request Header Fields Too Large\r\n\r\n'))
          return
        }
        request.params.push(content)
        return
      }
      request.answering = true
      clearTimeout(deadline)
      const decoded = decodeNameValues(Buffer.concat(request.params))
      request.params.length = 0
      if (decoded === undefined) {
        fail()
        return
      }
      answer(request, { params: decoded, remoteAddress: socket.remoteAddress })
    }

    function answer(request: Current, input: FastCgiRequest): void {
      let settled = false
      const done = (text: FastCgiAnswer) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        if (!request.aborted) finish(request, answerRecords(request.id, text))
      }
      const timer = setTimeout(() => done(unavailable), answerTimeout)
      timer.unref()
      try {
        const result = authorize(input)
        if (typeof result === 'string') done(result)
        else result.then(done, () => done(unavailable))
      } catch {
        done(unavailable)
      }
    }

    function finish(request: Current, records: Buffer): void {
      if (current !== request) return
      current = undefined
      write(records)
      // A kept connection may idle as long as a request may take to arrive; a closed one, as long to go.
      arm()
      if (!request.keepConn) socket.end()
    }
  }

  return server
}

/**
 * One HTTP request with the path sent exactly as given (no URL parser resolving `..` or
 * decoding), and its answer.
 */
import { request } from 'node:http'
import { connect } from 'node:net'

export interface RawAnswer {
  readonly status: number
  readonly headers: Record<string, string | string[] | undefined>
  /** The headers as received, names and values in turn (`send` only): a repeated header shows twice. */
  readonly rawHeaders?: readonly string[]
  readonly body: string
}

export function send(
  base: string,
  path: string,
  options: { method?: string; headers?: Record<string, string | string[]>; localAddress?: string } = {},
): Promise<RawAnswer> {
  const url = new URL(base)
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path,
        method: options.method ?? 'GET',
        headers: options.headers ?? {},
        agent: false,
        ...(options.localAddress === undefined ? {} : { localAddress: options.localAddress }),
      },
      (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => (body += chunk))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, rawHeaders: res.rawHeaders, body }))
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end()
  })
}

/** The JSON the echo app answered with: what it saw. */
export function appSaw(answer: RawAnswer): { method: string; url: string; headers: Record<string, string | undefined> } {
  return JSON.parse(answer.body) as { method: string; url: string; headers: Record<string, string | undefined> }
}

/**
 * Sends `head` (a request line and headers, without the blank line) byte for byte over a
 * new connection to 127.0.0.1:`port`, as no HTTP client would (an absolute-form request
 * line with another Host, HTTP/1.0 without Host), and reads the answer until the server
 * closes the connection.
 */
export function sendRaw(port: number, head: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    socket.on('error', reject)
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('latin1')
      const split = text.indexOf('\r\n\r\n')
      const lines = (split === -1 ? text : text.slice(0, split)).split('\r\n')
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1] ?? 0)
      const headers: Record<string, string> = {}
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(':')
        if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
      }
      resolve({ status, headers, body: split === -1 ? '' : text.slice(split + 4) })
    })
    // Written, not ended: nginx takes a half-closed connection for a client gone away (499).
    socket.write(`${head.replace(/\r?\n/g, '\r\n')}\r\nConnection: close\r\n\r\n`)
  })
}

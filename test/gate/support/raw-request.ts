/**
 * One HTTP request with the path sent exactly as given (no URL parser resolving `..` or
 * decoding), and its answer.
 */
import { request } from 'node:http'

export interface RawAnswer {
  readonly status: number
  readonly headers: Record<string, string | string[] | undefined>
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
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
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

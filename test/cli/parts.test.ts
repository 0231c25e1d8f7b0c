/**
 * The CLI's building blocks: table layout, terminal-safe text, shell quoting, redaction,
 * the port fallback and the error descriptions.
 */
import { createServer, type Server } from 'node:net'
import { describe, expect, it } from 'vitest'
import { describeCliError } from '../../cli/error-report.js'
import { redactingIo, type CliIo } from '../../cli/io.js'
import { isAddressInUse, withPortFallback } from '../../cli/port-fallback.js'
import { shellQuote } from '../../cli/shell-quote.js'
import { formatFields, formatTable } from '../../cli/table.js'
import { printable } from '../../cli/terminal-text.js'
import { InvalidOptionError, UpstreamError } from '../../src/errors.js'

describe('formatTable', () => {
  it('aligns columns by characters, not UTF-16 units, without trailing blanks', () => {
    expect(
      formatTable(
        ['ID', 'ROLE', 'NAME'],
        [
          ['a', 'admin', 'Lærer'],
          ['bbbb', '-', 'x'],
        ],
      ),
    ).toBe('ID    ROLE   NAME\n' + 'a     admin  Lærer\n' + 'bbbb  -      x\n')
    // One character, two UTF-16 units.
    expect(
      formatTable(
        ['A', 'B'],
        [
          ['𝐀', 'x'],
          ['ab', 'y'],
        ],
      ),
    ).toBe('A   B\n𝐀   x\nab  y\n')
  })

  it('neutralises escape sequences and other controls in cells', () => {
    const out = formatTable(['NAME'], [['Book club\u001b]0;pwned\u0007\u001b[2J\r\u202eevil']])
    expect(out).toBe('NAME\nBook club?]0;pwned??[2J??evil\n')
    expect(formatFields([['reason', 'a\u001b[31mred']])).toBe('  reason  a?[31mred\n')
  })
})

describe('printable', () => {
  it('keeps ordinary text, including non-Latin letters', () => {
    expect(printable('Åpent seminar i informasjonssikkerhet – 4a/3')).toBe('Åpent seminar i informasjonssikkerhet – 4a/3')
    expect(printable('\u0085\u009b\u007f\t\n')).toBe('?????')
  })
})

describe('shellQuote', () => {
  it('leaves plain words alone and single-quotes the rest', () => {
    expect(shellQuote('http://127.0.0.1:3000/api/staff')).toBe('http://127.0.0.1:3000/api/staff')
    expect(shellQuote('fc:org:example.org')).toBe('fc:org:example.org')
    expect(shellQuote('Authorization: Bearer abc')).toBe("'Authorization: Bearer abc'")
    expect(shellQuote("it's $HOME `x`")).toBe(`'it'\\''s $HOME \`x\`'`)
    expect(shellQuote('')).toBe("''")
  })
})

describe('redactingIo', () => {
  it('replaces the secret wherever it appears in stdout and stderr', () => {
    const written: string[] = []
    const io: CliIo = {
      stdout: { write: (t: string) => written.push(`out:${t}`) },
      stderr: { write: (t: string) => written.push(`err:${t}`) },
      env: {},
    }
    const safe = redactingIo(io, 's3cr3t-token')
    safe.stdout.write('a s3cr3t-token b s3cr3t-token')
    safe.stderr.write('error: s3cr3t-token')
    expect(written).toEqual(['out:a [redacted] b [redacted]', 'err:error: [redacted]'])
    expect(redactingIo(io, '')).toBe(io)
  })
})

describe('withPortFallback', () => {
  const listen = (server: Server, port: number): Promise<number> =>
    new Promise((resolve, reject) => {
      server.once('error', reject)
      server.listen(port, '127.0.0.1', () => resolve((server.address() as { port: number }).port))
    })
  const close = (server: Server): Promise<void> => new Promise((resolve) => server.close(() => resolve()))

  it('uses the preferred port when free, and any free port when it is taken', async () => {
    const blocker = createServer()
    const taken = await listen(blocker, 0)
    const other = createServer()
    try {
      const got = await withPortFallback(taken, (port) => listen(other, port))
      expect(got).not.toBe(taken)
      expect(got).toBeGreaterThan(0)
    } finally {
      await close(other)
      await close(blocker)
    }
    const free = createServer()
    const port = await listen(free, 0)
    await close(free)
    const again = createServer()
    try {
      expect(await withPortFallback(port, (p) => listen(again, p))).toBe(port)
    } finally {
      await close(again)
    }
  })

  it('passes other errors through', async () => {
    const failure = Object.assign(new Error('denied'), { code: 'EACCES' })
    await expect(withPortFallback(80, () => Promise.reject(failure))).rejects.toBe(failure)
    expect(isAddressInUse(Object.assign(new Error('x'), { code: 'EADDRINUSE' }))).toBe(true)
    expect(isAddressInUse(null)).toBe(false)
  })
})

describe('describeCliError', () => {
  it('names options by their flags and keeps upstream details', () => {
    expect(describeCliError(new InvalidOptionError('baseUrl', 'must use http: or https:, got ftp:'))).toMatchObject({
      message: '--base-url: must use http: or https:, got ftp:',
      usage: true,
    })
    const cause = Object.assign(new Error('connect'), { code: 'ECONNREFUSED' })
    expect(
      describeCliError(new UpstreamError('ERR_UPSTREAM_NETWORK', 'The group service could not be reached for me/groups', { cause })),
    ).toEqual({
      code: 'ERR_UPSTREAM_NETWORK',
      message: 'The group service could not be reached for me/groups [ECONNREFUSED]',
      usage: false,
    })
    expect(describeCliError(new TypeError('boom'))).toMatchObject({ code: 'ERR_INTERNAL', usage: false })
  })
})

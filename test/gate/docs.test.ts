/**
 * docs/gate.md shows the configs the tests run: its nginx, Caddy, HAProxy and Apache snippets
 * are examples/gate/nginx.conf, examples/gate/Caddyfile, examples/gate/haproxy.cfg,
 * examples/gate/voot-gate.lua and examples/gate/apache.conf byte for byte; its Traefik and Envoy
 * snippets use the endpoints and header names the protocol tests exercise.
 */
import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { runCli } from '../../cli/index.js'

const read = (path: string) => readFile(new URL(`../../${path}`, import.meta.url), 'utf8')

function fenced(markdown: string, language: string): string[] {
  return [...markdown.matchAll(new RegExp('```' + language + '\\n([\\s\\S]*?)```', 'g'))].map((match) => match[1] as string)
}

/** The words of a shell command line: blanks split, double quotes group (all the docs use). */
function words(command: string): string[] {
  return [...command.matchAll(/"([^"]*)"|(\S+)/g)].map((match) => match[1] ?? (match[2] as string))
}

describe('docs/gate.md', () => {
  it('shows the output its commands print, as they print it', async () => {
    const doc = await read('docs/gate.md')
    // A command of its own block, followed at once by a text block: what it prints.
    const shown = [...doc.matchAll(/```sh\nnpm run cli -- (gate [^\n]+)\n```\n\n```text\n([\s\S]*?)```/g)]
    expect(shown.length).toBeGreaterThanOrEqual(3)
    for (const [, command, output] of shown) {
      let printed = ''
      const write = (text: string) => (printed += text)
      // No variables set: a shown output never depends on the reader's environment.
      await runCli(words(command as string), { stdout: { write }, stderr: { write }, env: {} })
      expect(printed, command).toBe(output)
    }
  })

  it('shows examples/gate/nginx.conf, examples/gate/Caddyfile and examples/gate/apache.conf as they are', async () => {
    const doc = await read('docs/gate.md')
    expect(fenced(doc, 'nginx')).toEqual([await read('examples/gate/nginx.conf')])
    expect(fenced(doc, 'caddy')).toEqual([await read('examples/gate/Caddyfile')])
    expect(fenced(doc, 'apache')).toEqual([await read('examples/gate/apache.conf')])
    expect(fenced(doc, 'http')).toEqual([await read('examples/gate/apache-unavailable.asis')])
  })

  it('shows examples/gate/haproxy.cfg and examples/gate/voot-gate.lua as they are', async () => {
    const doc = await read('docs/gate.md')
    expect(fenced(doc, 'haproxy')).toEqual([await read('examples/gate/haproxy.cfg')])
    expect(fenced(doc, 'lua')).toEqual([await read('examples/gate/voot-gate.lua')])
  })

  it('points Traefik and Envoy at the endpoints the protocol tests call, with a 503 on error', async () => {
    const yaml = fenced(await read('docs/gate.md'), 'yaml').join('\n')
    expect(yaml).toContain('address: http://127.0.0.1:4181/_gate/forward-auth')
    expect(yaml).toContain('authResponseHeaders: [X-Voot-User, X-Voot-Rule, X-Voot-Service]')
    expect(yaml).toContain('trustForwardHeader: false')
    expect(yaml).toContain('path_prefix: /_gate/ext-authz')
    expect(yaml).toContain('status_on_error: { code: ServiceUnavailable }')
    expect(yaml).toContain('nginx.ingress.kubernetes.io/auth-url: "http://voot-gate.auth.svc.cluster.local:4181/_gate/auth-request/$host"')
    // ingress-nginx routes whoami with the browser endpoints, as every snippet does (test/gate/snippet-pages.test.ts runs the others).
    expect(yaml).toContain('- { path: /_gate/whoami, pathType: Exact, backend: { service: { name: voot-gate, port: { number: 4181 } } } }')
  })

  it('never has nginx tell the gate the raw Host header ($http_host) as the host to judge', async () => {
    const conf = await read('examples/gate/nginx.conf')
    const told = [...conf.matchAll(/proxy_set_header (X-Original-URL|X-Forwarded-Host) ([^;]+);/g)].map((match) => match[2] as string)
    expect(told).toEqual(['$host$gate_port', '$scheme://$host$gate_port$request_uri', '$scheme://$host$gate_port$request_uri'])
  })
})

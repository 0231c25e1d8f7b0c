/**
 * Debian's Apache httpd 2.4 for the gate's tests, in the foreground on loopback with its own
 * ServerRoot, pid file and logs in a temp dir, never the system service. The virtual host is
 * examples/gate/apache.conf, the file docs/gate.md shows, with the addresses replaced and a
 * CGI script (an app inside Apache) added.
 */
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startApacheForeground } from '../../../bench/apache-foreground.js'
import { freePort, type ProxyAddresses, type RunningProxy } from './proxies.js'

export const APACHE = process.env.VOOT_GUARD_APACHE ?? '/usr/sbin/apache2'
const MODULES = process.env.VOOT_GUARD_APACHE_MODULES ?? '/usr/lib/apache2/modules'
const EXAMPLES = new URL('../../../examples/gate/', import.meta.url)

/** The addresses of the example, and the test's: the gate's HTTP and FastCGI ports, the app's. */
export interface ApacheAddresses extends ProxyAddresses {
  readonly fastcgiPort: number
}

/** The modules the example needs (a2enmod authnz_fcgi headers proxy proxy_http alias asis rewrite unique_id), and CGI for the app inside. */
const MODULE_NAMES = [
  'mpm_prefork', 'authn_core', 'authz_core', 'authz_user', 'authnz_fcgi', 'headers', 'proxy', 'proxy_http', 'alias',
  'asis', 'rewrite', 'unique_id', 'cgi', 'mime',
] // prettier-ignore

/** A CGI script: the app that runs inside Apache. It prints what it was given, `-` for what it was not. */
const CGI_SCRIPT = `#!/bin/sh
printf 'Content-Type: text/plain\\r\\n\\r\\n'
printf 'user=%s\\n' "\${HTTP_X_VOOT_USER--}"
printf 'rule=%s\\n' "\${HTTP_X_VOOT_RULE--}"
printf 'remote_user=%s\\n' "\${REMOTE_USER--}"
printf 'uri=%s\\n' "\${REQUEST_URI--}"
`

/** examples/gate/apache.conf with the test's addresses, and the CGI app at /cgi-bin/ and (a front controller, through a RewriteRule's internal redirect) at /pretty/. */
export async function apacheSite(port: number, addresses: ApacheAddresses, dir: string): Promise<string> {
  const text = await readFile(new URL('apache.conf', EXAMPLES), 'utf8')
  const replaced = text
    .replace('fcgi://127.0.0.1:4182/', `fcgi://127.0.0.1:${addresses.fastcgiPort}/`)
    .replace('http://127.0.0.1:4181/_gate/$1', `http://127.0.0.1:${addresses.gatePort}/_gate/$1`)
    .replace('http://127.0.0.1:4181/_gate/forbidden', `http://127.0.0.1:${addresses.gatePort}/_gate/forbidden`)
    .replace('<VirtualHost *:80>', `<VirtualHost 127.0.0.1:${port}>`)
    // No port, as an admin writes it (docs/gate.md): the sign-in links carry the browser's own.
    .replace('ServerName app.example.org', 'ServerName 127.0.0.1')
    .replace('ProxyPass "/" "http://127.0.0.1:8080/"', `ProxyPass "/" "http://127.0.0.1:${addresses.appPort}/"`)
    .replace('/etc/apache2/voot-gate-unavailable.asis', `${dir}/voot-gate-unavailable.asis`)
  const cgi = `
    # The test's app inside Apache: a CGI script, also reached through a front controller's RewriteRule.
    ProxyPass "/cgi-bin/" "!"
    ProxyPass "/pretty/" "!"
    ScriptAlias "/cgi-bin/" "${dir}/cgi-bin/"
    Alias "/pretty/" "${dir}/pretty/"
    # A front controller: every path under /pretty/ is app.sh, by an internal redirect within the same configuration.
    <Directory "${dir}/pretty">
        Options +ExecCGI
        SetHandler cgi-script
        RewriteEngine On
        RewriteCond "%{REQUEST_URI}" "!=/pretty/app.sh"
        RewriteRule ^ /pretty/app.sh [L]
    </Directory>
`
  // Before the example's catch-all ProxyPass: the first ProxyPass that matches wins.
  return replaced.replace('    ProxyPass "/" ', `${cgi}    ProxyPass "/" `)
}

/** Starts Apache httpd with the example's virtual host in its own ServerRoot. */
export async function startApache(addresses: ApacheAddresses): Promise<RunningProxy> {
  const port = await freePort()
  const dir = await mkdtemp(join(tmpdir(), 'voot-gate-apache-'))
  // Apache's children run as www-data when started as root: they must reach the CGI script.
  await chmod(dir, 0o755)
  await mkdir(join(dir, 'cgi-bin'))
  await mkdir(join(dir, 'pretty'))
  await writeFile(join(dir, 'cgi-bin', 'app.sh'), CGI_SCRIPT, { mode: 0o755 })
  await writeFile(join(dir, 'pretty', 'app.sh'), CGI_SCRIPT, { mode: 0o755 })
  await writeFile(join(dir, 'voot-gate-unavailable.asis'), await readFile(new URL('apache-unavailable.asis', EXAMPLES)))
  const site = await apacheSite(port, addresses, dir)
  const asRoot = process.getuid?.() === 0
  const config = `
ServerRoot ${dir}
ServerName 127.0.0.1
PidFile ${dir}/httpd.pid
ErrorLog ${dir}/error.log
LogLevel warn
Listen 127.0.0.1:${port}
${MODULE_NAMES.map((name) => `LoadModule ${name}_module ${MODULES}/mod_${name}.so`).join('\n')}
${asRoot ? 'User www-data\nGroup www-data' : ''}
StartServers 2
MinSpareServers 1
MaxSpareServers 4
MaxRequestWorkers 16
TypesConfig /dev/null
${site}
`
  const file = join(dir, 'httpd.conf')
  await writeFile(file, config)
  return runApache(file, port, dir, site)
}

async function runApache(file: string, port: number, dir: string, site: string): Promise<RunningProxy> {
  const apache = await startApacheForeground(APACHE, file, {
    probe: `http://127.0.0.1:${port}/_gate/healthz`,
    errorLog: join(dir, 'error.log'),
  })
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    config: site,
    async stop() {
      await apache.stop()
      await rm(dir, { recursive: true, force: true })
    },
  }
}

/** Apache's error log so far (to show when a test fails). */
export async function apacheLog(proxy: RunningProxy): Promise<string> {
  const dir = /ScriptAlias "\/cgi-bin\/" "(.*)\/cgi-bin\/"/.exec(proxy.config)?.[1]
  return dir === undefined ? '' : readFile(join(dir, 'error.log'), 'utf8').catch(() => '')
}

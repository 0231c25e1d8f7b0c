/**
 * Apache httpd for the gate's benchmark: what a university would run instead of the gate,
 * mod_auth_openidc as an OAuth 2.0 resource server (RFC 7662 introspection over https,
 * its shm cache, `Require claim`, `AuthzSendForbiddenOnFailure On`) proxying to the app;
 * and the same server without the `<Location>` that asks for a token, as the control.
 * Debian's apache2 and libapache2-mod-auth-openidc, in the foreground on loopback with a
 * ServerRoot of its own (as test/gate/support/apache.ts runs it), never the system service.
 *
 * @module
 */
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startApacheForeground } from './apache-foreground.js'
import { freePort } from './run-context.js'

/** Where Debian puts Apache httpd and its modules. */
export const APACHE = process.env.VOOT_GUARD_APACHE ?? '/usr/sbin/apache2'
const MODULES = process.env.VOOT_GUARD_APACHE_MODULES ?? '/usr/lib/apache2/modules'
/** mod_auth_openidc (Debian: `apt-get install libapache2-mod-auth-openidc`). */
export const AUTH_OPENIDC = join(MODULES, 'mod_auth_openidc.so')

/** A running Apache httpd. */
export interface BenchApache {
  readonly port: number
  /** The parent's pid: it and its children are the proxy's CPU. */
  readonly pid: number
  stop(): Promise<void>
}

/** What the module row needs: the introspection endpoint and the CA bundle its certificate is in. */
export interface OpenidcOptions {
  readonly introspectionUrl: string
  readonly caFile: string
  /** `Require claim <name>:<value>`. */
  readonly requireClaim: string
}

const MODULE_NAMES = ['mpm_event', 'authn_core', 'authz_core', 'proxy', 'proxy_http'] as const

/**
 * The configuration: Debian's mpm_event settings (mpm_event.conf), keep-alive connections
 * kept for the whole run as nginx keeps them (`MaxKeepAliveRequests 0`: at Debian's 100,
 * the load generator would meet closing connections), the app behind `ProxyPass` (mod_proxy
 * keeps its connections to the app). With `openidc`, every path asks mod_auth_openidc.
 */
export function apacheConfig(options: {
  dir: string
  port: number
  appPort: number
  openidc: OpenidcOptions | undefined
  asRoot: boolean
}): string {
  const { dir, port, appPort, openidc, asRoot } = options
  const modules = MODULE_NAMES.map((name) => `LoadModule ${name}_module ${MODULES}/mod_${name}.so`)
  // Loaded in both, so that the control differs only in the <Location> that asks for a token.
  modules.push(`LoadModule auth_openidc_module ${AUTH_OPENIDC}`)
  const resourceServer =
    openidc === undefined
      ? ''
      : `
    <Location "/">
        AuthType oauth20
        Require claim ${openidc.requireClaim}
        AuthzSendForbiddenOnFailure On
    </Location>`
  return `ServerRoot ${dir}
ServerName 127.0.0.1
PidFile ${dir}/httpd.pid
ErrorLog ${dir}/error.log
LogLevel warn
Listen 127.0.0.1:${port}
${modules.join('\n')}
${asRoot ? 'User www-data\nGroup www-data' : ''}
StartServers 2
MinSpareThreads 25
MaxSpareThreads 75
ThreadLimit 64
ThreadsPerChild 25
MaxRequestWorkers 150
MaxConnectionsPerChild 0
KeepAlive On
MaxKeepAliveRequests 0
KeepAliveTimeout 60

OIDCCacheType shm
OIDCOAuthIntrospectionEndpoint ${openidc?.introspectionUrl ?? 'https://127.0.0.1:1/introspect'}
OIDCOAuthClientID bench
OIDCOAuthClientSecret bench-secret
OIDCOAuthSSLValidateServer On
${openidc === undefined ? '' : `OIDCCABundlePath ${openidc.caFile}`}
OIDCOAuthTokenExpiryClaim exp absolute mandatory
OIDCOAuthRemoteUserClaim sub
OIDCPassClaimsAs headers
OIDCAuthNHeader X-Remote-User

<VirtualHost 127.0.0.1:${port}>
    ServerName 127.0.0.1
    ProxyPass "/" "http://127.0.0.1:${appPort}/"${resourceServer}
</VirtualHost>
`
}

/** Starts Apache on a free port in front of `appPort`, with mod_auth_openidc asking for a token (or not). */
export async function startBenchApache(appPort: number, openidc: OpenidcOptions | undefined): Promise<BenchApache> {
  const port = await freePort()
  const dir = await mkdtemp(join(tmpdir(), 'voot-gate-bench-apache-'))
  // The children run as www-data when started as root: they read the CA bundle.
  await chmod(dir, 0o755)
  const file = join(dir, 'httpd.conf')
  await writeFile(file, apacheConfig({ dir, port, appPort, openidc, asRoot: process.getuid?.() === 0 }))
  const apache = await startApacheForeground(APACHE, file, { probe: `http://127.0.0.1:${port}/`, errorLog: join(dir, 'error.log') })
  return {
    port,
    pid: apache.pid,
    async stop() {
      await apache.stop()
      const log = await errorLog(dir)
      // Not shown: notices, the warning that the resource server is deprecated in favour of
      // mod_oauth2 (BENCHMARKS.md says so), and the refusal of bob that the run asks for (AH01631).
      const expected = [':notice]', 'oidc_check_config_oauth', 'AH01631: user bob']
      const problems = log.split('\n').filter((line) => line !== '' && !expected.some((text) => line.includes(text)))
      if (problems.length > 0) console.log(`apache2's error log:\n${problems.slice(-10).join('\n')}`)
      await rm(dir, { recursive: true, force: true })
    },
  }
}

async function errorLog(dir: string): Promise<string> {
  return readFile(join(dir, 'error.log'), 'utf8').catch(() => '')
}

/**
 * Login example: an Express 5 app that signs people in with OAuth 2.0 / OpenID Connect
 * (authorization code flow with PKCE, via `voot-guard/oauth`), keeps the access token in a
 * server-side session (express-session, cookie holds only the session id), lists the
 * user's groups, and guards an admin page with `requireGroup`. The provider can end its
 * sessions: `POST /backchannel-logout` (OpenID Connect Back-Channel Logout 1.0, through
 * `verifyLogoutToken`) destroys the express-sessions of the provider session it names.
 *
 * Run it with the built-in emulator (sign in as alice for the admin page, as bob for a 403):
 *   npx tsx examples/express-login/app.ts           # then open http://127.0.0.1:3000
 * Or against a real deployment:
 *   AUTH_URL=https://auth.dataporten.no VOOT_BASE_URL=https://groups-api.dataporten.no/groups \
 *   CLIENT_ID=... CLIENT_SECRET=... SESSION_SECRET=... npx tsx examples/express-login/app.ts
 *
 * Listens on http://127.0.0.1:3000 (set PORT for another port).
 */
import { randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { pathToFileURL } from 'node:url'
import express, { type ErrorRequestHandler, type Express, type Request, type RequestHandler } from 'express'
import session from 'express-session'
import { VootError } from 'voot-guard'
import { createGuard } from 'voot-guard/express'
import { createOAuthClient, OAuthError, verifyLogoutToken } from 'voot-guard/oauth'
import { startEmulator, type Emulator } from 'voot-guard/testing'
import { adminPage, groupsPage, homePage, problemPage, signInFailedPage, type SignedInUser } from './views.js'

// What this app keeps in a session. The browser only ever sees the session id.
declare module 'express-session' {
  interface SessionData {
    /** The checks of a sign-in in progress (from authorizationUrl()). */
    login: { state: string; nonce: string | undefined; codeVerifier: string }
    user: SignedInUser
    accessToken: string
    /** When the access token expires (ms since the epoch), if the provider said. */
    expiresAt: number | undefined
  }
}

/** What {@link createApp} needs. */
export interface LoginAppOptions {
  /** The authorization server, `{auth_url}`. */
  authUrl: string
  /** The group service, `{base_url}` with its `/groups` prefix. */
  baseUrl: string
  clientId: string
  clientSecret: string
  /** This app's `/callback` address, as registered with the authorization server. */
  redirectUri: string
  /** Signs the session cookie. */
  sessionSecret: string
}

const SESSION_COOKIE = 'voot-login.sid'
const EMPLOYEES = 'fc:org:example.org'

/** Builds the app. */
export function createApp(options: LoginAppOptions): Express {
  const oauth = createOAuthClient({
    authUrl: options.authUrl,
    clientId: options.clientId,
    clientSecret: options.clientSecret,
    redirectUri: options.redirectUri,
    scopes: ['openid', 'profile', 'groups'],
  })
  // The guard reads the Authorization header by default; here the token lives in the session.
  // errorHandling 'delegate' sends 401/403/503 to our error handler below, which renders pages.
  const guard = createGuard({
    baseUrl: options.baseUrl,
    realm: 'voot-guard-login-example',
    errorHandling: 'delegate',
    // With its expiry, so that no cached group answer outlives the token.
    getToken: (req) =>
      req.session.accessToken === undefined ? undefined : { token: req.session.accessToken, expiresAt: req.session.expiresAt },
  })

  const app = express()
  app.disable('x-powered-by')
  app.use(
    session({
      name: SESSION_COOKIE,
      secret: options.sessionSecret,
      resave: false,
      saveUninitialized: false,
      // The default MemoryStore is for demos; use a real store (Redis, a database) in production.
      cookie: { httpOnly: true, sameSite: 'lax', secure: options.redirectUri.startsWith('https:'), maxAge: 8 * 3_600_000 },
    }),
  )

  // A session whose access token has expired counts as signed out.
  app.use((req, _res, next) => {
    const { expiresAt } = req.session
    if (expiresAt !== undefined && Date.now() >= expiresAt) forget(req)
    next()
  })

  // Back-channel logout: the sessions of each provider session (`sid`) and user (`sub`), so
  // that a Logout Token can end them. Right for the MemoryStore of one process; with a shared
  // store, keep this index in it too.
  const sessionsOf = new Map<string, Set<string>>()
  const index = (key: string, sessionId: string) => sessionsOf.set(key, (sessionsOf.get(key) ?? new Set()).add(sessionId))

  const requireSignIn: RequestHandler = (req, res, next) => {
    if (req.session.user === undefined) res.redirect('/login')
    else next()
  }

  app.get('/', (req, res) => {
    res.send(homePage(req.session.user))
  })

  app.get('/login', async (req, res) => {
    const { url, state, nonce, codeVerifier } = await oauth.authorizationUrl()
    req.session.login = { state, nonce, codeVerifier }
    await save(req)
    res.redirect(url)
  })

  app.get('/callback', async (req, res) => {
    const login = req.session.login
    delete req.session.login
    if (login === undefined) {
      res.status(400).send(signInFailedPage('No sign-in was in progress, or it took too long. Please start again.'))
      return
    }
    let tokens
    try {
      // Checks state, exchanges the code with the PKCE verifier, verifies the ID token and nonce.
      tokens = await oauth.handleCallback(req.originalUrl, login)
    } catch (err) {
      if (err instanceof OAuthError && err.error === 'access_denied') {
        res.status(403).send(signInFailedPage('You declined to sign in.'))
        return
      }
      if (err instanceof VootError && err.code === 'ERR_OAUTH') {
        res.status(400).send(signInFailedPage('Signing in did not work. Please try again.'))
        return
      }
      throw err
    }
    const profile = await oauth.userinfo(tokens)
    // A new session id once signed in, so a session id planted before sign-in is worthless.
    await regenerate(req)
    req.session.user = { sub: tokens.claims?.sub ?? profile.sub ?? '', name: profile.name ?? tokens.claims?.sub ?? 'you' }
    req.session.accessToken = tokens.accessToken
    req.session.expiresAt = tokens.expiresAt
    await save(req)
    const sid = tokens.claims?.['sid']
    if (typeof sid === 'string') index(`sid:${sid}`, req.sessionID)
    index(`sub:${req.session.user.sub}`, req.sessionID)
    res.redirect('/')
  })

  // The provider posts a Logout Token here (register `${url}/backchannel-logout` as the
  // client's backchannel_logout_uri): every session it names ends, and it hears 200; a token
  // refused is a 400, which never says whether such a session existed.
  app.post('/backchannel-logout', express.urlencoded({ extended: false, limit: '20kb' }), async (req, res) => {
    res.set('cache-control', 'no-store')
    const body = req.body as Record<string, unknown> | undefined
    let key: string
    try {
      const claims = await verifyLogoutToken(oauth, typeof body?.['logout_token'] === 'string' ? body['logout_token'] : '')
      key = claims.sid !== undefined ? `sid:${claims.sid}` : `sub:${claims.sub ?? ''}`
    } catch {
      res.status(400).json({ error: 'invalid_request', error_description: 'The logout token was refused' })
      return
    }
    const ended = [...(sessionsOf.get(key) ?? [])]
    sessionsOf.delete(key)
    await Promise.all(ended.map((id) => new Promise<void>((resolve) => req.sessionStore.destroy(id, () => resolve()))))
    res.status(200).end()
  })

  app.get('/groups', requireSignIn, guard.authenticate(), async (req, res) => {
    res.send(groupsPage(req.session.user!, await req.voot!.groups()))
  })

  // NB: on fc:org groups `admin` means *employee*, not administrator.
  app.get('/admin', requireSignIn, guard.requireGroup(EMPLOYEES, 'admin'), (req, res) => {
    res.send(adminPage(req.session.user!))
  })

  app.post('/logout', async (req, res) => {
    const token = req.session.accessToken
    // Drop the cached group answers of this token right away.
    if (token !== undefined) guard.resolver.invalidate(token)
    await destroy(req)
    res.clearCookie(SESSION_COOKIE)
    res.redirect(303, '/')
  })

  const renderError: ErrorRequestHandler = (err: unknown, req, res, _next) => {
    const status = err instanceof VootError ? err.status : 500
    if (status === 401) {
      // The provider no longer accepts the token: sign in again.
      forget(req)
      res.redirect('/login')
      return
    }
    if (err instanceof VootError && err.headers['retry-after'] !== undefined) res.set('retry-after', err.headers['retry-after'])
    res.status(status >= 400 && status < 600 ? status : 500).send(problemPage(status, req.session?.user))
  }
  app.use(renderError)

  return app
}

/** Options of {@link start}. Without `authUrl`, a built-in emulator is started too. */
export interface StartOptions {
  /** Port to listen on (0: any free port). Default `3000`. */
  port?: number
  authUrl?: string
  baseUrl?: string
  clientId?: string
  clientSecret?: string
  sessionSecret?: string
}

/** A running example app. */
export interface RunningApp {
  /** The app's address, such as `http://127.0.0.1:3000`. */
  readonly url: string
  /** The emulator started for the app, when no `authUrl` was given. */
  readonly emulator: Emulator | undefined
  /** Stops the app (and its emulator). */
  close(): Promise<void>
}

/** Starts the app on 127.0.0.1 (the demo client's redirect URIs are on loopback). */
export async function start(options: StartOptions = {}): Promise<RunningApp> {
  if ((options.authUrl === undefined) !== (options.baseUrl === undefined)) {
    throw new Error('Give both authUrl and baseUrl, or neither (then the built-in emulator is used)')
  }
  const emulator = options.authUrl === undefined ? await startEmulator() : undefined
  const server = createServer()
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 3000, '127.0.0.1', () => resolve())
  })
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const app = createApp({
    authUrl: options.authUrl ?? emulator!.authUrl,
    baseUrl: options.baseUrl ?? emulator!.baseUrl,
    // The emulator's demo client; its loopback redirect URIs match on any port.
    clientId: options.clientId ?? 'demo-client',
    clientSecret: options.clientSecret ?? 'demo-secret',
    redirectUri: `${url}/callback`,
    sessionSecret: options.sessionSecret ?? randomBytes(32).toString('base64url'),
  })
  server.on('request', app)
  return {
    url,
    emulator,
    async close() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await emulator?.close()
    },
  }
}

function forget(req: Request): void {
  delete req.session.user
  delete req.session.accessToken
  delete req.session.expiresAt
}

function save(req: Request): Promise<void> {
  return new Promise((resolve, reject) => req.session.save((err: unknown) => (err ? reject(err) : resolve())))
}

function regenerate(req: Request): Promise<void> {
  return new Promise((resolve, reject) => req.session.regenerate((err: unknown) => (err ? reject(err) : resolve())))
}

function destroy(req: Request): Promise<void> {
  return new Promise((resolve, reject) => req.session.destroy((err: unknown) => (err ? reject(err) : resolve())))
}

// Started directly: listen on PORT, with the emulator unless AUTH_URL and VOOT_BASE_URL are set.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const env = process.env
  const running = await start({
    port: Number(env['PORT'] ?? 3000),
    ...(env['AUTH_URL'] === undefined ? {} : { authUrl: env['AUTH_URL'] }),
    ...(env['VOOT_BASE_URL'] === undefined ? {} : { baseUrl: env['VOOT_BASE_URL'] }),
    ...(env['CLIENT_ID'] === undefined ? {} : { clientId: env['CLIENT_ID'] }),
    ...(env['CLIENT_SECRET'] === undefined ? {} : { clientSecret: env['CLIENT_SECRET'] }),
    ...(env['SESSION_SECRET'] === undefined ? {} : { sessionSecret: env['SESSION_SECRET'] }),
  })
  console.log(`Login example on ${running.url}${running.emulator ? ` (emulator on ${running.emulator.authUrl})` : ''}`)
  console.log('Sign in as alice (an employee: admin page allowed) or bob (a student: 403).')
}

/**
 * The JWT middlewares voot-guard is compared with, each in its typical configuration and
 * in its best one (key objects rather than strings, so that nothing is parsed per request).
 *
 * @module
 */
import { createPublicKey, createSecretKey, generateKeyPairSync, type KeyObject } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { RequestHandler } from 'express'
import { expressjwt } from 'express-jwt'
import { auth } from 'express-oauth2-jwt-bearer'
import { exportJWK, SignJWT } from 'jose'

/** One peer route: its path and middleware. */
export interface PeerRoute {
  readonly path: string
  readonly algorithm: 'RS256' | 'HS256'
  readonly label: string
  readonly middleware: RequestHandler
}

/** The peers, the tokens they accept, and the JWKS server behind the `jwksUri` variant. */
export interface Peers {
  readonly routes: readonly PeerRoute[]
  readonly tokens: { readonly RS256: string; readonly HS256: string }
  close(): Promise<void>
}

const ISSUER = 'https://issuer.bench.invalid/'
const AUDIENCE = 'https://api.bench.invalid'

/** Creates the peer middlewares, a loopback JWKS server, and a token for each algorithm. */
export async function createPeers(): Promise<Peers> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString()
  const jwk = { ...(await exportJWK(publicKey)), kid: 'bench-1', alg: 'RS256', use: 'sig' }
  const jwks = { keys: [jwk] }
  const secret = 'bench-secret-0123456789-abcdefghijklmnopqrstuvwxyz'
  const secretKey: KeyObject = createSecretKey(Buffer.from(secret))

  const jwksServer: Server = createServer((_req, res) => {
    res.setHeader('content-type', 'application/json')
    res.end(JSON.stringify(jwks))
  })
  await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve))
  const jwksUri = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/.well-known/jwks.json`

  const claims = { scope: 'groups', sub: 'alice' }
  const exp = Math.floor(Date.now() / 1000) + 24 * 3600
  const RS256 = await new SignJWT(claims)
    .setProtectedHeader({ alg: 'RS256', kid: 'bench-1', typ: 'at+jwt' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(exp)
    .sign(privateKey)
  const HS256 = await new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(exp)
    .sign(secretKey)

  const common = { issuer: ISSUER, audience: AUDIENCE }
  const ejwt = { algorithms: ['RS256' as const], issuer: ISSUER, audience: AUDIENCE }
  const routes: PeerRoute[] = [
    {
      path: '/peer/oauth2-rs256-jwksuri',
      algorithm: 'RS256',
      label: 'express-oauth2-jwt-bearer RS256 jwksUri (loopback, cached)',
      middleware: auth({ ...common, jwksUri }),
    },
    {
      path: '/peer/oauth2-rs256-jwks',
      algorithm: 'RS256',
      label: 'express-oauth2-jwt-bearer RS256 local JWKS object',
      middleware: auth({ ...common, publicKey: jwks }),
    },
    {
      path: '/peer/oauth2-rs256-pem',
      algorithm: 'RS256',
      label: 'express-oauth2-jwt-bearer RS256 PEM string (imported once)',
      middleware: auth({ ...common, publicKey: pem, tokenSigningAlg: 'RS256' }),
    },
    {
      path: '/peer/oauth2-hs256',
      algorithm: 'HS256',
      label: 'express-oauth2-jwt-bearer HS256 secret',
      middleware: auth({ ...common, secret, tokenSigningAlg: 'HS256' }),
    },
    {
      path: '/peer/jwt-rs256-pem',
      algorithm: 'RS256',
      label: 'express-jwt RS256 PEM string',
      middleware: expressjwt({ ...ejwt, secret: pem }),
    },
    {
      path: '/peer/jwt-rs256-keyobject',
      algorithm: 'RS256',
      label: 'express-jwt RS256 KeyObject',
      middleware: expressjwt({ ...ejwt, secret: createPublicKey(pem) }),
    },
    {
      path: '/peer/jwt-hs256',
      algorithm: 'HS256',
      label: 'express-jwt HS256 string secret',
      middleware: expressjwt({ ...ejwt, algorithms: ['HS256'], secret }),
    },
    {
      path: '/peer/jwt-hs256-keyobject',
      algorithm: 'HS256',
      label: 'express-jwt HS256 KeyObject',
      middleware: expressjwt({ ...ejwt, algorithms: ['HS256'], secret: secretKey }),
    },
  ]
  return {
    routes,
    tokens: { RS256, HS256 },
    close: () => new Promise<void>((resolve) => jwksServer.close(() => resolve())),
  }
}

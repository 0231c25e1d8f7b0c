/**
 * `voot-guard/gate`: an authorization service for apps in any language behind a proxy
 * (nginx `auth_request`, ingress-nginx, Caddy `forward_auth`, Traefik `forwardAuth`, Envoy
 * `ext_authz`, Apache httpd's `mod_authnz_fcgi` through the `fastcgi` listener). The proxy asks it about each request; it decides with the same resolver,
 * guard core and HTTP contract as the framework guards, against live VOOT memberships.
 *
 * Run it with `voot-guard gate --config gate.yaml`, or embed it with {@link createGate}.
 * See docs/gate.md.
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http'
 * import { createGate } from 'voot-guard/gate'
 *
 * const gate = createGate({
 *   service: { baseUrl: 'https://groups-api.dataporten.no/groups' },
 *   rules: [{ path: '/admin/**', require: { group: 'fc:org:example.org', role: 'admin' } }, { allow: 'signed-in' }],
 * })
 * createServer(gate.listener).listen(4181, '127.0.0.1')
 * ```
 *
 * @module
 */
export { createGate, type Gate, type GateOptions } from './gate.js'
export { checkGateConfig } from './policy-tests.js'
export { loadGateConfig, type LoadedGateConfig } from './config/file.js'
export { startGateServer, type GateServer, type GateServerOptions } from './server.js'
export { formatConfigProblem, GateConfigError, type GateConfigPath, type GateConfigProblem } from './config/problem.js'
export type { GateConfig, GateDuration, GateGroupEntry, GateRequirement, GateRule, GateServiceConfig } from './config/types.js'
export type { GateFixtureMembership, GateFixtures, GatePolicyTest } from './config/policy-config.js'
export type { DecisionLogLine, DecisionLogOutput } from './ops/decision-log.js'
export type { FastCgiListener } from './fastcgi-listener.js'

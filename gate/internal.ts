/**
 * The gate's internal face: the public face of `voot-guard/gate` and, beside it, what the
 * `voot-guard gate` command (cli/) and the tests use of the gate's insides: the compiled
 * settings, the check endpoint's records, and the policy runner.
 *
 * It is not in package.json `exports`. Running a config's policy tests from code is public
 * through {@link checkGateConfig} (and every start and reload), which refuses a config whose
 * tests fail; the runner itself, with its per-test results and explanations, serves the
 * command's `--test` and `--explain` output, whose shape is the command's, not an API.
 *
 * @internal
 * @module
 */
export * from './index.js'
export { buildGate, configProblems, type Built } from './gate.js'
export type { CompiledRule, DecisionLogSettings, DecisionLogTarget, GateSettings } from './config/types.js'
export type { GateServiceSettings, GateServicesSettings } from './config/service.js'
export { parseRequestLine, type FixtureMembership, type PolicySettings, type PolicyTest, type RequestLine } from './config/policy-config.js'
export {
  createPolicyRunner,
  failingPolicyTests,
  type PolicyOutcome,
  type PolicyRequest,
  type PolicyRunner,
  type PolicyTestResult,
  type PolicyVerdict,
} from './policy-tests.js'
export type { CheckHandler } from './front/check.js'
export type { CheckRecord } from './ops/check-record.js'
export type { CheckProtocol, OriginalRequest, ProxyRequest } from './http/original-request.js'
export type { Answer } from './http/answer.js'
export type { FastCgiGate } from './fastcgi-listener.js'

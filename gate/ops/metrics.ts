/**
 * The gate's metrics in the Prometheus text format (`GET /_gate/metrics`): answers per
 * endpoint and status, sign-ins by outcome, and the resolver's health. No token, user or
 * group appears in them.
 *
 * @module
 */
import type { ResolverHealth } from '../../src/index.js'

/** Counters the gate keeps. */
export interface GateMetrics {
  check(endpoint: string, status: number): void
  signIn(outcome: 'started' | 'completed' | 'failed' | 'refreshed' | 'signed-out' | 'backchannel-logout'): void
  /**
   * The text exposition, with the resolver's health (with several group services, each
   * one's, labelled `service`) and the decision log's dropped lines.
   */
  render(health: ResolverHealth | Readonly<Record<string, ResolverHealth>>, decisionLogDropped?: number): string
}

const CIRCUIT: Readonly<Record<string, number>> = { closed: 0, 'half-open': 1, open: 2 }

function isHealth(value: ResolverHealth | Readonly<Record<string, ResolverHealth>>): value is ResolverHealth {
  return typeof (value as { status?: unknown }).status === 'string'
}

/** Creates the counters. */
export function createGateMetrics(): GateMetrics {
  // Counted per endpoint and status without building a label string per request.
  const checks = new Map<string, Map<number, number>>()
  const signIns = new Map<string, number>()
  return {
    check(endpoint, status) {
      let byStatus = checks.get(endpoint)
      if (byStatus === undefined) checks.set(endpoint, (byStatus = new Map<number, number>()))
      byStatus.set(status, (byStatus.get(status) ?? 0) + 1)
    },
    signIn(outcome) {
      const label = `outcome="${outcome}"`
      signIns.set(label, (signIns.get(label) ?? 0) + 1)
    },
    render(health, decisionLogDropped = 0) {
      // One group service: plain series, as ever; several: one series per service, by name.
      const byService: readonly [string | undefined, ResolverHealth][] = isHealth(health) ? [[undefined, health]] : Object.entries(health)
      const each = (value: (one: ResolverHealth) => number, metric: string) =>
        byService.map(([service, one]) => `${metric}${service === undefined ? '' : `{service="${service}"}`} ${value(one)}`)
      const lines = [
        '# HELP voot_gate_checks_total Answers of the check endpoints, by endpoint and status.',
        '# TYPE voot_gate_checks_total counter',
        ...[...checks].flatMap(([endpoint, byStatus]) =>
          [...byStatus].map(([status, value]) => `voot_gate_checks_total{endpoint="${endpoint}",status="${status}"} ${value}`),
        ),
        '# HELP voot_gate_signins_total Browser sign-ins, by outcome.',
        '# TYPE voot_gate_signins_total counter',
        ...[...signIns].map(([labels, value]) => `voot_gate_signins_total{${labels}} ${value}`),
        '# HELP voot_gate_up 1 when the group service is reachable (resolver status ok or degraded).',
        '# TYPE voot_gate_up gauge',
        ...each((one) => (one.status === 'down' ? 0 : 1), 'voot_gate_up'),
        '# HELP voot_gate_circuit_state Circuit breaker towards the group service: 0 closed, 1 half-open, 2 open.',
        '# TYPE voot_gate_circuit_state gauge',
        ...each((one) => CIRCUIT[one.circuit] ?? 0, 'voot_gate_circuit_state'),
        '# HELP voot_gate_upstream_inflight Calls to the group service under way.',
        '# TYPE voot_gate_upstream_inflight gauge',
        ...each((one) => one.inflight, 'voot_gate_upstream_inflight'),
        '# HELP voot_gate_cache_entries Answers in the in-process cache.',
        '# TYPE voot_gate_cache_entries gauge',
        ...each((one) => one.cacheEntries, 'voot_gate_cache_entries'),
        '# HELP voot_gate_decision_log_dropped_total Decision log lines dropped because their file could not keep up.',
        '# TYPE voot_gate_decision_log_dropped_total counter',
        `voot_gate_decision_log_dropped_total ${decisionLogDropped}`,
      ]
      return `${lines.join('\n')}\n`
    },
  }
}

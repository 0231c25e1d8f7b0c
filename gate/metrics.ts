/**
 * The gate's metrics in the Prometheus text format (`GET /_gate/metrics`): answers per
 * endpoint and status, sign-ins by outcome, and the resolver's health. No token, user or
 * group appears in them.
 *
 * @module
 */
import type { ResolverHealth } from '../src/index.js'

/** Counters the gate keeps. */
export interface GateMetrics {
  check(endpoint: string, status: number): void
  signIn(outcome: 'started' | 'completed' | 'failed' | 'refreshed' | 'signed-out'): void
  /** The text exposition, with the resolver's health and the decision log's dropped lines. */
  render(health: ResolverHealth, decisionLogDropped?: number): string
}

const CIRCUIT: Readonly<Record<string, number>> = { closed: 0, 'half-open': 1, open: 2 }

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
        `voot_gate_up ${health.status === 'down' ? 0 : 1}`,
        '# HELP voot_gate_circuit_state Circuit breaker towards the group service: 0 closed, 1 half-open, 2 open.',
        '# TYPE voot_gate_circuit_state gauge',
        `voot_gate_circuit_state ${CIRCUIT[health.circuit] ?? 0}`,
        '# HELP voot_gate_upstream_inflight Calls to the group service under way.',
        '# TYPE voot_gate_upstream_inflight gauge',
        `voot_gate_upstream_inflight ${health.inflight}`,
        '# HELP voot_gate_cache_entries Answers in the in-process cache.',
        '# TYPE voot_gate_cache_entries gauge',
        `voot_gate_cache_entries ${health.cacheEntries}`,
        '# HELP voot_gate_decision_log_dropped_total Decision log lines dropped because their file could not keep up.',
        '# TYPE voot_gate_decision_log_dropped_total counter',
        `voot_gate_decision_log_dropped_total ${decisionLogDropped}`,
      ]
      return `${lines.join('\n')}\n`
    },
  }
}

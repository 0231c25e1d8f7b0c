/**
 * Figure 7: heap growth per cached token, and the cache bound holding.
 *
 * @module
 */
import { SERVER_CPU } from '../cpus.js'
import { profile } from '../profile.js'
import { details, progress, rows, start, stop } from '../run-context.js'
import type { MemoryResult } from '../servers/memory.js'

/** Runs figure 7 in a process of its own per variety of answers and adds its rows. */
export async function memory(): Promise<void> {
  const { tokens, max, varieties } = profile.memory
  for (const variety of varieties) {
    progress(`7. memory (${variety} answers): ${tokens.toLocaleString('en-US')} distinct tokens, cache.max ${max.toLocaleString('en-US')}`)
    const child = await start<MemoryResult>('./servers/memory.js', [String(tokens), String(max), 'carol', variety], SERVER_CPU, {
      nodeOptions: ['--expose-gc'],
    })
    const result = child.ready
    await stop(child)
    details[`memory-${variety}`] = result
    const growth = result.heapEndMiB - result.heapStartMiB
    const leak = result.heapEndMiB - result.heapFullMiB
    const answers =
      variety === 'shared'
        ? `every token the same ${result.bodyBytes}-byte me/groups answer, as a class shares its groups`
        : `every token's membership with a title of its own, nothing shared`
    if (variety === varieties[0]) {
      rows.push({
        figure: '7',
        measure: `cache entries after ${tokens.toLocaleString('en-US')} tokens (largest seen)`,
        result: `${result.finalSize.toLocaleString('en-US')} (${result.largestSize.toLocaleString('en-US')}); ${result.upstreamCalls.toLocaleString('en-US')} upstream calls in ${result.seconds.toFixed(1)} s`,
        target: `≤ ${max.toLocaleString('en-US')}`,
        met: result.largestSize <= max && result.finalSize === max,
      })
    }
    rows.push({
      figure: '7',
      measure: `heap growth, empty resolver → end (${answers})`,
      result:
        `${growth.toFixed(1)} MiB (${((growth * 1024 * 1024) / max).toFixed(0)} bytes per entry); ` +
        `${result.arrayBuffersMiB.toFixed(1)} MiB in ArrayBuffers, RSS ${result.rssMiB.toFixed(0)} MiB; ` +
        `${result.finalSize.toLocaleString('en-US')} entries at the end`,
      target: '≤ 64 MiB',
      met: growth <= 64 && result.finalSize === max,
    })
    rows.push({
      figure: '7',
      measure: `heap growth once the cache was full (${max.toLocaleString('en-US')} → ${tokens.toLocaleString('en-US')} tokens, ${variety})`,
      result: `${leak.toFixed(1)} MiB`,
      target: '',
      met: undefined,
    })
  }
}

/**
 * `voot-guard check --explain`: the tree of `resolver.explain` as the person who holds the
 * token reads it: each part of the requirement, what it came to, the answers it read and
 * where they came from, and which parts the decision rests on.
 *
 * @module
 */
import type { ExplainedAnswer, ExplainedMembership, ExplainedNode } from '../src/index.js'
import { printable } from './terminal-text.js'

const ACTIVITY: Readonly<Record<ExplainedMembership['activity'], string>> = {
  active: 'active',
  inactive: 'inactive',
  not_yet_valid: 'not yet valid',
  expired: 'expired',
}

/**
 * The tree, one line per part and one per answer, indented by depth; every value from the
 * group service made printable. The parts the decision rests on end in `<- settled`.
 */
export function formatExplanation(tree: ExplainedNode): string {
  return `How it was decided (your own memberships: for your eyes only):\n${explanationLines(tree)
    .map((line) => `${line}\n`)
    .join('')}`
}

/** The tree's lines without a heading, each indented by its depth and made printable. */
export function explanationLines(tree: ExplainedNode): string[] {
  const lines: string[] = []
  walk(tree, 1, lines)
  return lines.map((line) => printable(line))
}

function walk(node: ExplainedNode, depth: number, lines: string[]): void {
  const pad = '  '.repeat(depth)
  const outcome = node.reason === undefined ? node.outcome : `${node.outcome}, ${node.reason}`
  lines.push(`${pad}${node.requirement}: ${outcome}${node.settled ? '  <- settled' : ''}`)
  if ('parts' in node) {
    for (const part of node.parts) walk(part, depth + 1, lines)
    return
  }
  for (const answer of node.answers) lines.push(`${pad}  ${describeAnswer(answer)}`)
}

function describeAnswer(answer: ExplainedAnswer): string {
  if (answer.endpoint === 'where') {
    return answer.error === undefined
      ? `predicate returned ${answer.result === true ? 'true' : 'not true'}`
      : `predicate failed: ${answer.error}`
  }
  const where = answer.endpoint === 'me/groups' ? 'me/groups' : `me/groups/${answer.groupId ?? ''}`
  const from = answer.source === undefined ? '' : ` (${answer.source}, ${answer.tier ?? ''})`
  if (answer.error !== undefined) return `${where}${from}: failed, ${answer.error}`
  if (answer.listed !== undefined) return `${where}${from}: ${answer.listed} groups listed`
  const subject = answer.endpoint === 'me/groups' ? `${answer.groupId ?? ''} ` : ''
  if (answer.membership === null || answer.membership === undefined) {
    return `${where}${from}: ${answer.endpoint === 'me/groups' ? `${subject}not listed` : 'not a member (404)'}`
  }
  return `${where}${from}: ${answer.endpoint === 'me/groups' ? `${subject}listed, ` : ''}${describeMembership(answer.membership)}`
}

function describeMembership(membership: ExplainedMembership): string {
  const parts = [`role ${membership.role ?? '(none)'}`, ACTIVITY[membership.activity]]
  if (membership.notBefore !== undefined) parts.push(`from ${membership.notBefore}`)
  if (membership.notAfter !== undefined) parts.push(`until ${membership.notAfter}`)
  return parts.join(', ')
}

/**
 * A rule's parameters (issue 52): `path: /courses/{course}/**` binds one path segment to
 * `course`, and the rule's `require` names it in its group ids (`group:
 * "fc:fs:fs:emne:example.org:{course}:1"`), so that one rule serves every course.
 *
 * A parameter takes one segment of a safe alphabet: letters, digits, `_`, `-` and `.`
 * (never `:`, `/` or `%`: a URL can fill in the part of an id the rule leaves open, and
 * never change the shape of the id around it), at most {@link MAX_PARAM_LENGTH}
 * characters; the rule's `params` may narrow it with a regular expression, anchored, that
 * a value must match too (else the rule does not match the request). The expression is
 * checked when the config is read: no backreferences, lookarounds or nested quantifiers,
 * so matching stays linear on bounded values.
 *
 * @module
 */
import type { ProblemList } from './problem.js'
import type { GateRule } from './types.js'

/** What a parameter's value may hold, whatever the rule's `params` says. */
export const PARAM_ALPHABET = /^[A-Za-z0-9_.-]+$/

/** Longest value a parameter takes (a path segment; a group id stays well under its limit). */
export const MAX_PARAM_LENGTH = 128

/** Longest `params` expression. */
const MAX_PATTERN_LENGTH = 200

const PARAM_SEGMENT = /^\{([A-Za-z_][A-Za-z0-9_]{0,31})\}$/
const PARAM_IN_TEXT = /\{([^{}]*)\}/g
const DANGEROUS = [
  [/\\[1-9]|\\k</, 'has a backreference'],
  [/\(\?<?[=!]/, 'has a lookaround'],
  [/\([^()]*[+*}][^()]*\)\s*[+*{]/, 'nests quantifiers (a quantified group that holds one)'],
] as const

/** The parameter a path segment binds (`{course}`), or `undefined`. */
export function segmentParam(segment: string): string | undefined {
  return PARAM_SEGMENT.exec(segment)?.[1]
}

/** The parameters a path glob binds, in order. */
export function pathParams(glob: string | undefined): string[] {
  if (glob === undefined) return []
  return glob
    .split('/')
    .map(segmentParam)
    .filter((name): name is string => name !== undefined)
}

/** The `{name}`s a text (a group id of `require`) names. */
export function templateParams(text: string): string[] {
  return [...text.matchAll(PARAM_IN_TEXT)].map((found) => found[1] as string)
}

/** Whether the rule binds or names any parameter (a rule without is compiled as before). */
export function hasParams(rule: GateRule): boolean {
  return pathParams(rule.path).length > 0 || rule.params !== undefined || requireTexts(rule).some((text) => text.includes('{'))
}

/** The group ids (and type) of a rule's `require`, with where each is. */
function requireEntries(rule: GateRule): [(string | number)[], string][] {
  const want = rule.require as Record<string, unknown> | undefined
  if (typeof want !== 'object' || want === null) return []
  const entries: [(string | number)[], string][] = []
  for (const key of ['group', 'groupOfType'] as const) if (typeof want[key] === 'string') entries.push([[key], want[key]])
  for (const key of ['anyOf', 'allOf'] as const) {
    const ids = want[key]
    if (Array.isArray(ids)) ids.forEach((id, k) => typeof id === 'string' && entries.push([[key, k], id]))
  }
  return entries
}

function requireTexts(rule: GateRule): string[] {
  return requireEntries(rule).map(([, text]) => text)
}

/**
 * Every problem of a rule's parameters: a `{...}` in a path that is not a whole segment or
 * not a name, a parameter bound twice, a `{name}` in `require` the path does not bind, a
 * `params` entry the path does not bind, an expression that is not one or is dangerous.
 */
export function ruleParamProblems(rule: GateRule, index: number, problems: ProblemList): void {
  const at = ['rules', index]
  const bound = new Set<string>()
  if (rule.path !== undefined) {
    for (const segment of rule.path.split('/')) {
      const name = segmentParam(segment)
      if (name !== undefined) {
        if (bound.has(name)) problems.add([...at, 'path'], `binds the parameter {${name}} twice`)
        bound.add(name)
      } else if (/[{}]/.test(segment)) {
        problems.add([...at, 'path'], `"${segment}": a parameter is a whole segment, {name} (letters, digits and _)`)
      }
    }
  }
  for (const [where, text] of requireEntries(rule)) {
    for (const name of templateParams(text)) {
      if (!bound.has(name)) {
        const known = bound.size === 0 ? 'its path binds none' : `its path binds ${[...bound].map((each) => `{${each}}`).join(', ')}`
        problems.add([...at, 'require', ...where], `names the parameter {${name}}, which ${known}`)
      }
    }
  }
  const params = rule.params
  if (params === undefined) return
  if (typeof params !== 'object' || params === null || Array.isArray(params)) {
    problems.add([...at, 'params'], 'must map parameter names to regular expressions, such as { course: "[A-Z]{3}[0-9]{4}" }')
    return
  }
  for (const [name, pattern] of Object.entries(params)) {
    const where = [...at, 'params', name]
    if (!bound.has(name)) problems.add(where, `names a parameter the path does not bind (${rule.path ?? 'no path'})`)
    else if (typeof pattern !== 'string' || pattern.length === 0 || pattern.length > MAX_PATTERN_LENGTH) {
      problems.add(where, `must be a regular expression of 1 to ${MAX_PATTERN_LENGTH} characters`)
    } else {
      const danger = DANGEROUS.find(([test]) => test.test(pattern))
      if (danger !== undefined) problems.add(where, `${danger[1]}: not allowed in a parameter's expression`)
      else {
        try {
          new RegExp(pattern, 'u')
        } catch (error) {
          problems.add(where, `is not a regular expression: ${(error as Error).message}`)
        }
      }
    }
  }
}

/** The parameter values of a request's path, or `undefined` when the rule does not match it. */
export type ParamBinder = (path: string) => Readonly<Record<string, string>> | undefined

/**
 * The binder of a rule whose path binds parameters: `regex` is its path's expression (from
 * `globToRegExp`, with a named group per parameter); each value checked against the
 * alphabet and the rule's narrowing.
 */
export function createParamBinder(regex: RegExp, params: Readonly<Record<string, string>> | undefined): ParamBinder {
  const narrowing = Object.entries(params ?? {}).map(([name, pattern]) => [name, new RegExp(`^(?:${pattern})$`, 'u')] as const)
  return (path) => {
    const groups = regex.exec(path)?.groups
    if (groups === undefined) return undefined
    for (const name in groups) {
      const value = groups[name] as string
      if (value.length > MAX_PARAM_LENGTH || !PARAM_ALPHABET.test(value)) return undefined
    }
    for (const [name, test] of narrowing) if (!test.test(groups[name] as string)) return undefined
    return groups
  }
}

/** `text` with each `{name}` replaced by its value. */
export function fillTemplate(text: string, values: Readonly<Record<string, string>>): string {
  return text.replace(PARAM_IN_TEXT, (_whole, name: string) => values[name] ?? '')
}

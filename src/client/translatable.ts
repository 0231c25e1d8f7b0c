/**
 * Picking one language out of a {@link Translatable} text.
 *
 * @module
 */
import type { Translatable } from '../types.js'

/**
 * Returns the text of a {@link Translatable} in the first of `languages` it has, else in
 * English (`en`), else in any language it has; `''` when it has none. Language tags
 * compare case-insensitively, and a tag such as `nb-NO` also matches a plain `nb`.
 *
 * @param text - A plain string (returned as it is) or an object of language tags to strings.
 * @param languages - Preferred language tags, most preferred first.
 *
 * @example
 * ```ts
 * localize({ nb: 'Ansatt', en: 'Employee' }, ['nb-NO'])  // 'Ansatt'
 * localize({ nb: 'Ansatt', en: 'Employee' }, ['de'])     // 'Employee'
 * localize('Example University')                         // 'Example University'
 * ```
 */
export function localize(text: Translatable, languages: readonly string[] = []): string {
  if (typeof text === 'string') return text
  const byTag = new Map<string, string>()
  for (const [tag, value] of Object.entries(text)) {
    if (typeof value === 'string' && !byTag.has(tag.toLowerCase())) byTag.set(tag.toLowerCase(), value)
  }
  for (const language of [...languages, 'en']) {
    if (typeof language !== 'string') continue
    const tag = language.toLowerCase()
    const found = byTag.get(tag) ?? byTag.get(tag.split('-')[0] ?? tag)
    if (found !== undefined) return found
  }
  for (const value of byTag.values()) return value
  return ''
}

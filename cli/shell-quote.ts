/**
 * Quoting for the command lines the CLI and the demo print for people to paste.
 *
 * @module
 */

/**
 * Quotes `word` for a POSIX shell: unchanged when it holds only characters no shell treats
 * specially, else in single quotes.
 */
export function shellQuote(word: string): string {
  if (/^[\w@%+=:,./-]+$/.test(word)) return word
  return `'${word.replace(/'/g, `'\\''`)}'`
}

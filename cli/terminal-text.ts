/**
 * Making text from a remote service safe to print on a terminal.
 *
 * @module
 */

// C0 and C1 controls, DEL, and the bidi overrides that can make text read differently
// from what it is. A group name from a hostile or broken service must not move the
// cursor, change colours or set the window title.
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g

/**
 * Replaces control characters (escape sequences included) with `?`, so that printed
 * text cannot drive the terminal.
 */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, '?')
}

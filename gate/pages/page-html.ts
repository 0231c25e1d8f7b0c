/**
 * The gate's pages for people (`/_gate/whoami`, `/_gate/forbidden`): server-rendered HTML
 * without script, under a Content-Security-Policy that allows nothing but the page's own
 * style (by its hash) and forms posting to the page's origin. Every value is escaped.
 *
 * @module
 */
import { createHash } from 'node:crypto'
import type { Answer } from '../http/answer.js'

const STYLE = `
:root { color-scheme: light dark; font-family: system-ui, sans-serif; line-height: 1.5; }
body { max-width: 42rem; margin: 2rem auto; padding: 0 1rem; }
h1 { font-size: 1.5rem; }
code { font-size: 0.95em; }
ul.rules { padding-left: 1.2rem; }
ul.rules li { margin-bottom: 0.6rem; }
.pass { color: #0a6b2d; }
.fail { color: #a4161a; }
.unknown { color: #7a5b00; }
@media (prefers-color-scheme: dark) { .pass { color: #6fdc8c; } .fail { color: #ff8389; } .unknown { color: #f1c21b; } }
nav { margin-top: 2rem; display: flex; gap: 1rem; align-items: center; flex-wrap: wrap; }
button { font: inherit; padding: 0.3rem 0.9rem; cursor: pointer; }
ul.choices { list-style: none; padding: 0; }
ul.choices li { margin: 0.8rem 0; }
ul.choices a { display: inline-block; padding: 0.5rem 1.2rem; border: 1px solid currentColor; border-radius: 0.3rem; text-decoration: none; }
a:focus, button:focus { outline: 3px solid #0f62fe; outline-offset: 2px; }
`
const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64')

/** The page's Content-Security-Policy: its own style, forms to itself, nothing else (no script, no frames, no images). */
export const PAGE_CSP = `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`

/** `text` with `& < > " '` escaped, for HTML text and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`)
}

/** A whole page: `title` escaped, `main` already HTML (built with {@link escapeHtml}). */
export function htmlPage(status: number, title: string, main: string): Answer {
  const body = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${main}
</main>
</body>
</html>
`
  return {
    status,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'content-security-policy': PAGE_CSP,
      'x-content-type-options': 'nosniff',
      // Not no-referrer: a browser then sends `Origin: null` with the sign-out form, which the gate refuses.
      'referrer-policy': 'same-origin',
    },
    body,
  }
}

/** Whether a request asks for HTML (a browser) rather than JSON. */
export function wantsHtml(accept: string | undefined): boolean {
  if (accept === undefined) return false
  const lower = accept.toLowerCase()
  return lower.includes('text/html') && !lower.startsWith('application/json')
}

/** The links at the foot of a page: sign out (a form: sign-out is a POST) and who am I (about `path`, from a refused request). */
export function pageLinks(signedIn: boolean, path?: string): string {
  // Back to whoami, which then says so: a page that sent the browser on to the provider would
  // end the form's redirects on another origin, which the page's form-action 'self' refuses.
  const signOut = signedIn
    ? `<form method="post" action="/_gate/signout?rd=%2F_gate%2Fwhoami"><button type="submit">Sign out</button></form>`
    : ''
  // From a refused request: whoami about its path (a rule with parameters then names the group of this URL).
  const whoami = path === undefined ? '/_gate/whoami' : `/_gate/whoami?path=${encodeURIComponent(path)}`
  return `<nav aria-label="Your session">${signOut}<a href="${escapeHtml(whoami)}">Who am I here?</a></nav>`
}

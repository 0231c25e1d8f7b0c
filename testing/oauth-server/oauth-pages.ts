/**
 * The HTML pages of the emulated authorization server: the sign-in and consent page (pick a
 * demo user, approve or decline the requested scopes) and the error page shown when the
 * request cannot be sent back to the client (unknown client, unregistered redirect URI).
 *
 * Plain, accessible HTML: real labels, a fieldset with a legend, buttons with text, no
 * JavaScript; so a person, a screen reader, `fetch` and Playwright can all use it.
 *
 * @module
 */
import type { Answer } from '../answer.js'

/** What the consent page shows. */
export interface ConsentPage {
  /** Handle of the pending request, posted back with the decision. */
  readonly requestId: string
  readonly clientName: string
  /** The service the person signs in with (`Feide`, `SURFconext (surf)`): two emulated services look alike otherwise. */
  readonly service: string
  readonly redirectUri: string
  readonly scopes: readonly string[]
  readonly users: readonly { readonly id: string; readonly name: string }[]
  /** The user to preselect (`login_hint`). */
  readonly selectedUser?: string
  /** The path the form posts to. */
  readonly action: string
}

const SCOPE_TEXT: Readonly<Record<string, string>> = {
  openid: 'Sign you in (OpenID Connect)',
  userid: 'Your user id',
  profile: 'Your name',
  email: 'Your e-mail address',
  groups: 'Your group memberships',
}

const STYLE = `
body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1d1f23}
main{max-width:34rem;margin:2rem auto;background:#fff;padding:1.5rem 2rem;border-radius:8px;box-shadow:0 1px 3px #0002}
fieldset{border:1px solid #ccd;border-radius:6px;margin:1rem 0;padding:.5rem 1rem}
label{display:block;padding:.25rem 0}
.warning{background:#fff3cd;border:2px solid #d39e00;padding:.5rem 1rem;border-radius:6px}
.note{color:#555;font-size:.9rem}
button{font:inherit;padding:.5rem 1.25rem;margin-right:.5rem;border-radius:6px;border:1px solid #335;cursor:pointer}
button[value=approve]{background:#1f5fbf;color:#fff}
button:focus-visible,input:focus-visible{outline:3px solid #f90;outline-offset:2px}
code{background:#eef;padding:0 .25rem;border-radius:3px}`

const HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  // No form-action directive: browsers apply it to the redirect back to the client after the POST.
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
}

/**
 * The sign-in and consent page.
 */
export function consentPage(page: ConsentPage): Answer {
  const insecure = isInsecureRedirect(page.redirectUri)
  const users = page.users
    .map(
      (user) =>
        `<label><input type="radio" name="user" value="${escape(user.id)}" required${user.id === page.selectedUser ? ' checked' : ''}> ${escape(user.name)} <span class="note">(${escape(user.id)})</span></label>`,
    )
    .join('\n')
  const scopes =
    page.scopes.length === 0
      ? '<li>Nothing beyond signing you in</li>'
      : page.scopes.map((s) => `<li><code>${escape(s)}</code>: ${escape(SCOPE_TEXT[s] ?? 'A permission of this service')}</li>`).join('\n')
  const body = `<h1>Sign in to ${escape(page.clientName)} with ${escape(page.service)}</h1>
<p>This is the voot-guard emulator playing ${escape(page.service)}: choose a demo user to sign in as. No password is needed.</p>
${insecure ? `<p class="warning" role="alert"><strong>Warning:</strong> this application receives your sign-in over an unsecured (HTTP) address: <code>${escape(page.redirectUri)}</code>.</p>` : ''}
<form method="post" action="${escape(page.action)}">
<input type="hidden" name="request_id" value="${escape(page.requestId)}">
<fieldset>
<legend>Demo user</legend>
${users}
</fieldset>
<h2 id="permissions">${escape(page.clientName)} asks for</h2>
<ul aria-labelledby="permissions">
${scopes}
</ul>
<button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="decline" formnovalidate>Decline</button>
</form>`
  return { status: 200, headers: HEADERS, body: document(`Sign in with ${page.service}`, body) }
}

/**
 * The page for a request that cannot be answered by a redirect to the client.
 */
export function errorPage(status: number, message: string): Answer {
  const body = `<h1>Sign-in request refused</h1>
<p role="alert">${escape(message)}</p>
<p class="note">The application that sent you here is misconfigured; nothing was sent back to it.</p>`
  return { status, headers: HEADERS, body: document('Sign-in request refused', body) }
}

function document(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)} · voot-guard emulator</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`
}

// The real service warns about every unsecured (HTTP) redirect URI, loopback included.
function isInsecureRedirect(uri: string): boolean {
  return uri.toLowerCase().startsWith('http:')
}

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

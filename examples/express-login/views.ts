/**
 * The pages of the login example: plain server-rendered HTML, every value escaped.
 */
import { localize, type GroupWithMembership } from 'voot-guard'

/** Who is signed in, as kept in the session. */
export interface SignedInUser {
  readonly sub: string
  readonly name: string
}

/** Escapes text for HTML content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

/** The frame of every page: a title, a navigation bar that knows who is signed in, the content. */
export function layout(title: string, content: string, user: SignedInUser | undefined): string {
  const nav = user
    ? `<a href="/">Home</a> · <a href="/groups">My groups</a> · <a href="/admin">Admin</a>
       <form method="post" action="/logout" class="inline"><button type="submit">Sign out</button></form>`
    : `<a href="/">Home</a> · <a href="/login">Sign in</a>`
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · voot-guard login example</title>
<style>
body{font:16px/1.5 system-ui,sans-serif;max-width:44rem;margin:2rem auto;padding:0 1rem}
nav{border-bottom:1px solid #ccc;padding-bottom:.5rem;margin-bottom:1rem}
.inline{display:inline;margin-left:.5rem}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.25rem .5rem;text-align:left}
</style>
</head>
<body>
<nav aria-label="Main">${nav}</nav>
<main>
<h1>${escapeHtml(title)}</h1>
${content}
</main>
</body>
</html>
`
}

/** The start page. */
export function homePage(user: SignedInUser | undefined): string {
  const content = user
    ? `<p>Signed in as <strong>${escapeHtml(user.name)}</strong> (<code>${escapeHtml(user.sub)}</code>).</p>
       <p>See <a href="/groups">your groups</a>, or try the <a href="/admin">admin page</a>.</p>`
    : `<p>This app signs you in with OAuth 2.0 / OpenID Connect and shows your groups.</p>
       <p><a href="/login">Sign in</a></p>`
  return layout('voot-guard login example', content, user)
}

/** The user's groups, with their role in each. */
export function groupsPage(user: SignedInUser, groups: readonly GroupWithMembership[]): string {
  const rows = groups
    .map(
      (g) =>
        `<tr><td>${escapeHtml(localize(g.displayName, ['en']))}</td><td><code>${escapeHtml(g.id)}</code></td><td>${escapeHtml(g.membership.basic ?? '')}</td></tr>`,
    )
    .join('\n')
  const content =
    groups.length === 0
      ? '<p>You are not an active member of any group.</p>'
      : `<table><caption>Your active memberships</caption>
<thead><tr><th scope="col">Group</th><th scope="col">Id</th><th scope="col">Role</th></tr></thead>
<tbody>
${rows}
</tbody></table>`
  return layout('My groups', content, user)
}

/** The page only employees of example.org may see. */
export function adminPage(user: SignedInUser): string {
  return layout(
    'Admin area',
    `<p>Welcome, ${escapeHtml(user.name)}. You are an employee of example.org.</p>
     <p>(On <code>fc:org</code> groups the role <code>admin</code> means <em>employee</em>, not administrator.)</p>`,
    user,
  )
}

/** The friendly answer to a request the user may not make, or that failed. */
export function problemPage(status: number, user: SignedInUser | undefined): string {
  if (status === 403) {
    return layout(
      'Access denied',
      '<p>This page is for employees of example.org. Your account does not have that membership.</p><p><a href="/">Back to the start page</a></p>',
      user,
    )
  }
  if (status === 503) {
    return layout('Try again soon', '<p>The group service did not answer. Please try again in a moment.</p>', user)
  }
  return layout('Something went wrong', `<p>The request failed (status ${status}). <a href="/">Start again</a>.</p>`, user)
}

/** The answer when signing in did not work. */
export function signInFailedPage(reason: string): string {
  return layout('Sign-in failed', `<p>${escapeHtml(reason)}</p><p><a href="/login">Try again</a></p>`, undefined)
}

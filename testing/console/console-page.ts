/**
 * The emulator's console page (`/_emulator/`): users with their tokens and a curl line each,
 * memberships editable in place, the fault switches and the rate limit, and the last calls
 * the group service received.
 *
 * Server-rendered HTML whose every change is a plain form (POST, then back to the page), so
 * that it works by keyboard, with a screen reader and without script. One small script, under
 * the page's Content-Security-Policy by its hash, only adds the copy buttons.
 *
 * @module
 */
import { createHash } from 'node:crypto'
import type { Answer } from '../answer.js'
import { CONSOLE_FAULTS, type ConsoleState } from './console-actions.js'

const STYLE = `
body{font:15px/1.45 system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1d1f23}
main{max-width:72rem;margin:1.5rem auto;background:#fff;padding:1rem 2rem 2rem;border-radius:8px;box-shadow:0 1px 3px #0002}
h1{font-size:1.6rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #dde}
table{border-collapse:collapse;width:100%;margin:.5rem 0}
th,td{text-align:left;padding:.3rem .5rem;border-bottom:1px solid #e4e6ea;vertical-align:top}
caption{text-align:left;color:#555;padding:.25rem 0}
code{background:#eef;padding:0 .25rem;border-radius:3px;word-break:break-all;font-size:.85rem}
form{display:inline}
input,select,button{font:inherit;padding:.2rem .4rem}
input[type=text]{width:13rem}
button{border:1px solid #335;border-radius:5px;background:#fff;cursor:pointer}
button.primary{background:#1f5fbf;color:#fff}
button:focus-visible,input:focus-visible,select:focus-visible{outline:3px solid #f90;outline-offset:2px}
.notice{background:#e7f3e7;border:1px solid #5a5;padding:.5rem 1rem;border-radius:6px}
.problem{background:#fde8e8;border:1px solid #c33;padding:.5rem 1rem;border-radius:6px}
.note{color:#555;font-size:.9rem}`

// Shows the copy buttons (hidden without script) and copies a token or a curl line.
const SCRIPT = `for(const b of document.querySelectorAll('button[data-copy]')){b.hidden=false;b.addEventListener('click',()=>{navigator.clipboard.writeText(b.dataset.copy).then(()=>{b.textContent='Copied'})})}`

const hash = (text: string): string => `'sha256-${createHash('sha256').update(text).digest('base64')}'`

/** The console's Content-Security-Policy: its own style and script by hash, forms to itself, nothing else. */
export const CONSOLE_CSP = `default-src 'none'; style-src ${hash(STYLE)}; script-src ${hash(SCRIPT)}; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

/** What the page says after a change: done, or the problem (never an exception's stack). */
export interface PageMessage {
  readonly kind: 'notice' | 'problem'
  readonly text: string
}

/** The options of a `<select>`, `selected` preselected. */
function options(values: readonly (readonly [string, string])[], selected?: string): string {
  return values
    .map(([value, label]) => `<option value="${escape(value)}"${value === selected ? ' selected' : ''}>${escape(label)}</option>`)
    .join('')
}

/** Where a console page is: its forms' path, the group endpoints, the service it changes. */
export interface ConsolePlace {
  /** Where its forms post (`/_emulator`, `/surf/_emulator`). */
  readonly base: string
  /** The group endpoints', for the curl lines. */
  readonly baseUrl: string
  /** The service it changes, named in its heading (`Feide`, `SURFconext (surf)`). */
  readonly service?: string
}

/** The console page for `state` at `place`. */
export function consolePage(state: ConsoleState, place: ConsolePlace, message?: PageMessage): Answer {
  const { base, baseUrl, service } = place
  const roles = state.roles.map((role) => [role, role] as const)
  const users = state.users.map((user) => [user.id, `${user.name} (${user.id})`] as const)
  const groups = state.groups.map((group) => [group.id, group.id] as const)

  const tokens = state.users
    .map((user) => {
      const curl = `curl -H 'Authorization: Bearer ${user.token}' ${baseUrl}/me/groups`
      return `<tr><th scope="row">${escape(user.id)}</th><td>${escape(user.name)}</td>
<td><code>${escape(user.token)}</code> <button type="button" hidden data-copy="${escape(user.token)}" aria-label="Copy ${escape(user.id)}'s token">Copy</button></td>
<td><code>${escape(curl)}</code> <button type="button" hidden data-copy="${escape(curl)}" aria-label="Copy the curl line of ${escape(user.id)}">Copy</button></td>
<td><form method="post" action="${base}/sessions"><input type="hidden" name="action" value="end"><input type="hidden" name="user" value="${escape(user.id)}"><button type="submit" aria-label="End ${escape(user.id)}'s sessions">End sessions</button></form></td></tr>`
    })
    .join('\n')

  const memberships = state.users
    .flatMap((user) =>
      user.memberships.map((m) => {
        const who = `${user.id} in ${m.group}`
        const form = `set-${user.id}-${m.group}`.replace(/[^A-Za-z0-9-]/g, '_')
        return `<tr><th scope="row">${escape(user.id)}</th><td><code>${escape(m.group)}</code></td>
<td><select name="role" form="${form}" aria-label="Role of ${escape(who)}">${options(roles, m.role)}</select></td>
<td><input type="checkbox" name="active" value="true" form="${form}" aria-label="${escape(who)} is active"${m.active ? ' checked' : ''}></td>
<td><input type="text" name="notBefore" form="${form}" value="${escape(m.notBefore ?? '')}" placeholder="none" aria-label="Not before (${escape(who)})"></td>
<td><input type="text" name="notAfter" form="${form}" value="${escape(m.notAfter ?? '')}" placeholder="none" aria-label="Not after (${escape(who)})"></td>
<td><form id="${form}" method="post" action="${base}/members"><input type="hidden" name="action" value="set"><input type="hidden" name="user" value="${escape(user.id)}"><input type="hidden" name="group" value="${escape(m.group)}"><input type="hidden" name="dates" value="true"><button type="submit" aria-label="Save ${escape(who)}">Save</button></form>
<form method="post" action="${base}/members"><input type="hidden" name="action" value="remove"><input type="hidden" name="user" value="${escape(user.id)}"><input type="hidden" name="group" value="${escape(m.group)}"><button type="submit" aria-label="Remove ${escape(who)}">Remove</button></form></td></tr>`
      }),
    )
    .join('\n')

  const faults =
    state.faults.length === 0
      ? '<p>No fault: the group service answers normally.</p>'
      : `<ul>${state.faults
          .map(
            (fault) =>
              `<li><strong>${escape(fault.fault)}</strong> for ${fault.user === undefined ? 'everyone' : escape(fault.user)} <form method="post" action="${base}/faults"><input type="hidden" name="action" value="clear"><input type="hidden" name="id" value="${fault.id}"><button type="submit" aria-label="Switch off ${escape(fault.fault)} for ${fault.user === undefined ? 'everyone' : escape(fault.user)}">Switch off</button></form></li>`,
          )
          .join('\n')}</ul>`

  const calls =
    state.calls.length === 0
      ? '<p>No call yet.</p>'
      : `<table><caption>The newest first</caption><thead><tr><th scope="col">time</th><th scope="col">call</th><th scope="col">user</th><th scope="col">status</th></tr></thead><tbody>
${state.calls.map((call) => `<tr><td>${escape(call.at.slice(11, 23))}</td><td><code>${escape(`${call.method} ${call.path}`)}</code></td><td>${escape(call.user ?? '')}</td><td>${call.status === 0 ? 'none' : call.status}</td></tr>`).join('\n')}
</tbody></table>`

  const main = `<p class="note">A stand-in group service for development and tests: changes here apply to the next call. The group endpoints are at <code>${escape(baseUrl)}</code>.</p>
${message === undefined ? '' : `<p class="${message.kind}" role="${message.kind === 'problem' ? 'alert' : 'status'}">${escape(message.text)}</p>`}
<h2 id="tokens">Users and their tokens</h2>
<table><caption>A personal token per user, with the groups scope; End sessions sends a Logout Token to each client registered with a backchannelLogoutUri</caption><thead><tr><th scope="col">user</th><th scope="col">name</th><th scope="col">token</th><th scope="col">try it</th><th scope="col">sign-in</th></tr></thead><tbody>
${tokens}
</tbody></table>
<h2 id="memberships">Memberships</h2>
<table><caption>Change a role, the dates (ISO, such as 2026-12-01T00:00:00Z) or active, then Save</caption><thead><tr><th scope="col">user</th><th scope="col">group</th><th scope="col">role</th><th scope="col">active</th><th scope="col">not before</th><th scope="col">not after</th><th scope="col">change</th></tr></thead><tbody>
${memberships}
</tbody></table>
<form method="post" action="${base}/members"><input type="hidden" name="action" value="add">
<label for="add-user">User</label> <select id="add-user" name="user">${options(users)}</select>
<label for="add-group">Group</label> <select id="add-group" name="group">${options(groups)}</select>
<label for="add-role">Role</label> <select id="add-role" name="role">${options(roles, 'member')}</select>
<button type="submit" class="primary">Add the membership</button></form>
<h2 id="faults">Faults</h2>
${faults}
<form method="post" action="${base}/faults"><input type="hidden" name="action" value="set">
<label for="fault">Fault</label> <select id="fault" name="fault">${options(CONSOLE_FAULTS.map((fault) => [fault, FAULT_TEXT[fault]] as const))}</select>
<label for="fault-user">For</label> <select id="fault-user" name="user"><option value="">everyone</option>${options(users)}</select>
<button type="submit" class="primary">Switch on</button></form>
<h2 id="rate-limit">Rate limit</h2>
<p>${state.rateLimit === null ? 'None.' : `${state.rateLimit.limit} calls per ${state.rateLimit.windowMs} ms per client address, then 429 with Retry-After.`}</p>
<form method="post" action="${base}/rate-limit">
<label for="limit">Calls</label> <input id="limit" type="number" name="limit" min="1" value="${state.rateLimit?.limit ?? 10}">
<label for="window">per ms</label> <input id="window" type="number" name="windowMs" min="1" value="${state.rateLimit?.windowMs ?? 1000}">
<button type="submit" name="action" value="set">Set</button> <button type="submit" name="action" value="off">No limit</button></form>
<h2 id="calls">Last calls to the group service</h2>
${calls}`
  return consoleDocument(main, message?.kind === 'problem' ? 400 : 200, true, service)
}

/** A console page around `main`: the head, the style, the copy buttons' script when `script`, and the headers. */
function consoleDocument(main: string, status: number, script: boolean, service?: string): Answer {
  // A service's console says which service it changes: with two open, each tab says which.
  const title = service === undefined ? 'voot-guard emulator console' : `voot-guard emulator console: ${service}`
  const body = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escape(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>${escape(title)}</h1>
${main}
</main>
${script ? `<script>${SCRIPT}</script>\n` : ''}</body>
</html>
`
  return {
    status,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'content-security-policy': CONSOLE_CSP,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'same-origin',
    },
    body,
  }
}

const FAULT_TEXT: Readonly<Record<(typeof CONSOLE_FAULTS)[number], string>> = {
  slow: 'slow (2 s per answer)',
  '500': '500 (server error)',
  '429': '429 (rate limited, Retry-After: 5)',
  down: 'down (connection reset)',
}

/** One service as the index of several lists it. */
export interface ConsoleIndexEntry {
  readonly name: string
  readonly dialect: string
  readonly baseUrl: string
  readonly authUrl: string
  /** Its own console (`<origin>/<name>/_emulator/`). */
  readonly consoleUrl: string
}

/**
 * The console of an emulator of several services (`/_emulator/`): a section per service,
 * with its addresses and a link to its own console, where its memberships, faults and
 * rate limit are changed.
 */
export function consoleIndexPage(services: readonly ConsoleIndexEntry[]): Answer {
  const sections = services.map(
    (service) => `<section aria-labelledby="service-${escape(service.name)}">
<h2 id="service-${escape(service.name)}">${escape(service.name)} (${escape(service.dialect)})</h2>
<table><tbody>
<tr><th scope="row">group endpoints</th><td><code>${escape(service.baseUrl)}</code></td></tr>
<tr><th scope="row">OAuth issuer</th><td><code>${escape(service.authUrl)}</code></td></tr>
</tbody></table>
<p><a href="${escape(service.consoleUrl)}">The console of ${escape(service.name)}</a>: its users and tokens, memberships, faults, rate limit and calls.</p>
</section>`,
  )
  const main = `<p class="note">This emulator serves ${services.length} group services, each under its own path with its own data, tokens and OAuth server: a token of one is refused by the others.</p>
${sections.join('\n')}`
  return consoleDocument(main, 200, false)
}

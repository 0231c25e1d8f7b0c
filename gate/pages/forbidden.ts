/**
 * `/_gate/forbidden`: the page a proxy shows for a 403 (nginx `error_page 403`, Caddy
 * `handle_response`). It is asked with the original request's description, the proxy's
 * own headers as for a check (`X-Original-URL` and `-Method`, or `X-Forwarded-*`), and the
 * client's credentials, and decides that request again with the gate's own check, so that
 * the page says what the 403 said: who is signed in, and what the request needed in the
 * 403's words. A browser gets the page; an API client the check's JSON answer, as it would
 * without the page. Any answer but a refusal (the sign-in redirect, a 503) passes through.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http'
import { errorDescriptionOf, jsonAnswer, type Answer } from '../http/answer.js'
import type { CheckHandler } from '../front/check.js'
import { escapeHtml, htmlPage, pageLinks, wantsHtml } from './page-html.js'
import { AUTH_REQUEST_PATH, originalRequest, singleHeader } from '../http/original-request.js'
import type { SessionCookies } from '../session/session.js'

const GENERIC = 'The gate does not let this request through'

/** Creates the forbidden endpoint over the gate's check (not logged again: the first check was). */
export function createForbiddenPage(
  check: CheckHandler,
  cookies: SessionCookies | undefined,
): (req: IncomingMessage, url: string) => Promise<Answer> {
  return async function forbidden(req, url) {
    // Asked as the check endpoint that reads the headers the proxy sent.
    const [protocol, checkUrl] =
      singleHeader(req, 'x-original-url') !== undefined ? (['auth-request', AUTH_REQUEST_PATH] as const) : (['forward-auth', url] as const)
    let answer = await check(protocol, req, checkUrl)
    // Allowed now (a membership came since): still the answer to a refused request, in general words.
    if (answer.status === 200) answer = jsonAnswer(403, { error: 'forbidden', error_description: GENERIC })
    if (answer.status !== 403) return answer
    if (!wantsHtml(req.headers.accept)) return answer

    // The request as the check read it (a refusal came from it, so it was read).
    const original = originalRequest(protocol, req, checkUrl)
    const host = original?.host
    const path = original?.target.replace(/[?#].*$/s, '') ?? ''
    const session = original === undefined ? undefined : cookies?.readSession(req.headers.cookie, original)
    const who =
      session !== undefined
        ? `You are signed in as <strong>${escapeHtml(session.sub)}</strong>.`
        : req.headers.authorization !== undefined
          ? 'The request carried an access token (a bearer token).'
          : 'You are not signed in.'
    const asked = host === undefined ? '' : `<p>You asked for <code>${escapeHtml(`${host}${path}`)}</code>.</p>`
    return htmlPage(
      403,
      'Access refused',
      `<h1>You do not have access to this page</h1>
<p>${who}</p>
${asked}
<p>${escapeHtml(errorDescriptionOf(answer) ?? GENERIC)}.</p>
<p>If you think you should have access, ask whoever manages the group for a membership, then try again.</p>
${pageLinks(session !== undefined, host === undefined ? undefined : path)}`,
    )
  }
}

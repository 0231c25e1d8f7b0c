/**
 * The page on which a browser chooses where to sign in, when the gate has several group
 * services that sign people in and nothing about the request chooses one: a link per
 * provider, each back to `/_gate/signin` with its `service`. HTML without script, as the
 * gate's other pages.
 *
 * @module
 */
import type { Answer } from '../http/answer.js'
import { escapeHtml, htmlPage } from './page-html.js'

/** One provider offered: the service's name (sent back in the link) and its label (shown). */
export interface SignInChoice {
  readonly service: string
  readonly label: string
}

/**
 * The page offering `choices`, each a link that starts the sign-in with that service and
 * comes back to `rd` (already checked as a safe target).
 *
 * @example
 * ```ts
 * signInChoicePage([{ service: 'feide', label: 'Feide' }, { service: 'surf', label: 'SURFconext' }], '/wiki/')
 * ```
 */
export function signInChoicePage(choices: readonly SignInChoice[], rd: string): Answer {
  const back = encodeURIComponent(rd)
  const items = choices
    .map(
      ({ service, label }) =>
        `<li><a href="/_gate/signin?service=${encodeURIComponent(service)}&amp;rd=${escapeHtml(back)}">Sign in with ${escapeHtml(label)}</a></li>`,
    )
    .join('\n')
  return htmlPage(
    200,
    'Choose where to sign in',
    `<h1>Choose where to sign in</h1>
<p>This site lets in people of more than one organisation. Sign in where your account is: your access token goes only to that provider's group service.</p>
<ul class="choices" aria-label="Where to sign in">
${items}
</ul>`,
  )
}

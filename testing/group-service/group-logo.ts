/**
 * Group logos: the real Dataporten service serves `groups/{groupid}/logo` as an image. In
 * the emulator's data a group's logo is a `data:` URL in its `logo` field; that field is
 * the emulator's own bookkeeping, so it is served only as the image, never inside a
 * group's JSON.
 *
 * @module
 */
import type { Answer } from '../answer.js'
import type { EmulatorGroup } from '../data/data.js'
import { parseLogo } from '../data/logo-data-url.js'

export { parseLogo, type GroupLogo } from '../data/logo-data-url.js'

/**
 * The answer to `groups/{groupid}/logo` for a visible group: the image with its content
 * type, or `undefined` (a 404) when the group has no logo.
 */
export function logoAnswer(group: EmulatorGroup): Answer | undefined {
  const logo = typeof group.logo === 'string' ? parseLogo(group.logo) : undefined
  if (logo === undefined) return undefined
  return { status: 200, headers: { 'content-type': logo.contentType, 'cache-control': 'public, max-age=3600' }, body: logo.bytes }
}

/**
 * A group as its JSON is served: without the emulator's `logo` field (a large `data:` URL
 * that the real service does not put in a group's JSON).
 */
export function servedGroup(group: EmulatorGroup): EmulatorGroup {
  if (!Object.hasOwn(group, 'logo')) return group
  const { logo: _logo, ...rest } = group
  return rest
}

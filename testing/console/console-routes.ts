/**
 * The console's HTTP face under `/_emulator/`: the page (`GET /_emulator/`), its forms
 * (`POST /_emulator/members`, `/faults`, `/rate-limit`, `/sessions`, each back to the page),
 * and the same as JSON for scripts and `voot-guard emulator members|fault|sessions`
 * (`GET /_emulator/api/state`, `POST /_emulator/api/members`, `/api/faults`,
 * `/api/rate-limit`, `/api/sessions`). Shapes in docs/emulator.md.
 *
 * Served to loopback clients only: whoever reaches it can change who is in what. A form must
 * come from the console's own origin and the JSON endpoints take `application/json` only, so
 * that another site open in the same browser cannot post to it.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { InvalidArgumentError } from '../../src/index.js'
import { jsonAnswer, writeAnswer, type Answer } from '../answer.js'
import { readBody, readForm } from '../oauth-server/oauth-form.js'
import {
  changeFault,
  changeMembership,
  changeRateLimit,
  consoleState,
  endUserSessions,
  type ConsoleFault,
  type ConsoleTarget,
  type FaultChange,
  type MembershipChange,
  type RateLimitSetting,
} from './console-actions.js'
import { consolePage, type PageMessage } from './console-page.js'

/** Where the console lives. */
export const CONSOLE_PATH = '/_emulator'

/** A loopback client's address: the console answers no other. */
export const LOOPBACK = /^(?:127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/

/** The console of one emulator: `handle` answers its paths and returns `false` for any other. */
export interface ConsoleRoutes {
  handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean>
}

type Fields = Readonly<Record<string, unknown>>

/** A membership change from a form's or a JSON body's fields. */
function membershipChange(fields: Fields, form: boolean): MembershipChange {
  const action = fields['action']
  if (action !== 'add' && action !== 'set' && action !== 'remove') throw new InvalidArgumentError('action: must be add, set or remove')
  const text = (name: string): string | undefined => {
    const value = fields[name]
    if (value === undefined) return undefined
    if (typeof value !== 'string') throw new InvalidArgumentError(`${name}: must be a string`)
    return value
  }
  const user = text('user')
  const group = text('group')
  if (user === undefined || user === '') throw new InvalidArgumentError('user: missing')
  if (group === undefined || group === '') throw new InvalidArgumentError('group: missing')
  const role = text('role')
  // A form's checkbox is absent when unticked; a form that shows the dates sends them all.
  const active = form ? (fields['dates'] === 'true' ? fields['active'] === 'true' : undefined) : fields['active']
  const dated = !form || fields['dates'] === 'true'
  return {
    action,
    user,
    group,
    ...(role === undefined || role === '' ? {} : { role }),
    ...(active === undefined ? {} : { active: active as boolean }),
    ...(dated && 'notBefore' in fields ? { notBefore: text('notBefore') ?? '' } : {}),
    ...(dated && 'notAfter' in fields ? { notAfter: text('notAfter') ?? '' } : {}),
  }
}

function faultChange(fields: Fields): FaultChange {
  const action = fields['action']
  if (action === 'clear') {
    const id = fields['id']
    if (id === undefined || id === '') return { action }
    const number = typeof id === 'number' ? id : Number(id)
    if (!Number.isInteger(number)) throw new InvalidArgumentError('id: must be a fault id')
    return { action, id: number }
  }
  if (action !== 'set') throw new InvalidArgumentError('action: must be set or clear')
  const fault = fields['fault']
  const user = fields['user']
  const ms = fields['ms']
  if (typeof fault !== 'string') throw new InvalidArgumentError('fault: missing')
  if (user !== undefined && typeof user !== 'string') throw new InvalidArgumentError('user: must be a string')
  const wait = ms === undefined || ms === '' ? undefined : Number(ms)
  // The switch's name is checked by changeFault, with the others.
  return { action, fault: fault as ConsoleFault, ...(user === undefined ? {} : { user }), ...(wait === undefined ? {} : { ms: wait }) }
}

function rateLimitSetting(fields: Fields): RateLimitSetting {
  if (fields['action'] === 'off' || fields['limit'] === null) return null
  return { limit: Number(fields['limit']), windowMs: Number(fields['windowMs']) }
}

const problemAnswer = (error: unknown): Answer => jsonAnswer(400, { error: 'invalid_request', message: (error as Error).message })

/**
 * Creates the console of one emulated service. `origin` is the emulator's own
 * (`http://127.0.0.1:4000`), `baseUrl` its group endpoints' (for the curl lines), `pagePath`
 * where the browser sees the console (`/_emulator`, or `/surf/_emulator` for one of several
 * services; `handle` is given the path within the service).
 */
export function createConsoleRoutes(
  target: ConsoleTarget,
  origin: () => string,
  baseUrl: () => string,
  pagePath = CONSOLE_PATH,
): ConsoleRoutes {
  const changes: Record<string, (fields: Fields, form: boolean) => string | Promise<string>> = {
    members(fields, form) {
      const change = membershipChange(fields, form)
      changeMembership(target, change)
      return `${change.action === 'remove' ? 'Removed' : change.action === 'add' ? 'Added' : 'Saved'}: ${change.user} in ${change.group}.`
    },
    faults(fields) {
      const change = faultChange(fields)
      changeFault(target, change)
      return change.action === 'clear'
        ? 'Switched off.'
        : `Switched on: ${change.fault} for ${change.user === undefined || change.user === '' ? 'everyone' : change.user}.`
    },
    sessions(fields) {
      const user = fields['user']
      if (fields['action'] !== 'end') throw new InvalidArgumentError('action: must be end')
      if (typeof user !== 'string' || user === '') throw new InvalidArgumentError('user: missing')
      return endUserSessions(target, user)
    },
    'rate-limit'(fields) {
      const setting = rateLimitSetting(fields)
      changeRateLimit(target, setting)
      return setting === null ? 'No rate limit.' : `Rate limit: ${setting.limit} calls per ${setting.windowMs} ms.`
    },
  }

  const page = (message?: PageMessage): Answer =>
    consolePage(consoleState(target), { base: pagePath, baseUrl: baseUrl(), service: target.service }, message)

  return {
    async handle(req, res, url) {
      const path = url.pathname
      if (path !== CONSOLE_PATH && !path.startsWith(`${CONSOLE_PATH}/`)) return false
      if (!LOOPBACK.test(req.socket.remoteAddress ?? '')) return false
      const method = req.method ?? 'GET'
      const rest = path.slice(CONSOLE_PATH.length)
      if (rest === '' || rest === '/') {
        if (method !== 'GET' && method !== 'HEAD') writeAnswer(res, jsonAnswer(405, { error: 'method_not_allowed' }, { allow: 'GET' }))
        else writeAnswer(res, page())
        return true
      }
      if (rest === '/api/state') {
        writeAnswer(res, jsonAnswer(200, consoleState(target), { 'cache-control': 'no-store' }))
        return true
      }
      const api = rest.startsWith('/api/')
      const change = changes[rest.slice(api ? '/api/'.length : 1)]
      if (change === undefined) return false
      if (method !== 'POST') {
        writeAnswer(res, jsonAnswer(405, { error: 'method_not_allowed' }, { allow: 'POST' }))
        return true
      }
      if (api) {
        const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase()
        const body = type === 'application/json' ? await readBody(req) : undefined
        if (type !== 'application/json') req.resume()
        let fields: unknown
        try {
          fields = body === undefined ? undefined : JSON.parse(body)
        } catch {
          fields = undefined
        }
        if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) {
          writeAnswer(
            res,
            jsonAnswer(400, {
              error: 'invalid_request',
              message: 'The body must be a JSON object (Content-Type: application/json, at most 64 KiB)',
            }),
          )
          return true
        }
        try {
          const done = await change(fields as Fields, false)
          writeAnswer(res, jsonAnswer(200, { message: done, state: consoleState(target) }, { 'cache-control': 'no-store' }))
        } catch (error) {
          if (!(error instanceof InvalidArgumentError)) throw error
          writeAnswer(res, problemAnswer(error))
        }
        return true
      }
      // A form: from the console itself, never from another site open in the browser.
      if (req.headers.origin !== origin()) {
        req.resume()
        writeAnswer(res, jsonAnswer(403, { error: 'forbidden', message: 'The console takes forms from its own page only' }))
        return true
      }
      const form = await readForm(req)
      if (!form.ok) {
        writeAnswer(res, page({ kind: 'problem', text: form.reason }))
        return true
      }
      try {
        const done = await change(Object.fromEntries(form.params), true)
        writeAnswer(res, page({ kind: 'notice', text: done }))
      } catch (error) {
        if (!(error instanceof InvalidArgumentError)) throw error
        writeAnswer(res, page({ kind: 'problem', text: error.message }))
      }
      return true
    },
  }
}

/**
 * Putting the guard's result on an Express request (`req.voot`) without giving the request
 * a new property.
 *
 * Express gives every request its app's request prototype (`Object.setPrototypeOf(req,
 * app.request)`). On V8 before 13, an object whose prototype was set that way gets a
 * hidden class of its own, so each property added to it afterwards builds a new hidden
 * class, and adding `req.voot` would cost a large share of the guard's warm-cache time
 * (the figures are in BENCHMARKS.md, "Where a guarded Express request's time goes").
 *
 * So `voot` is an accessor on Express's request prototype (`express.request`, which Express
 * documents as the place to add to requests), defined once, and the context itself is kept
 * in a `WeakMap` keyed by the request: no hidden class is built per request, and the entry
 * goes when the request does. Reading `req.voot` through the accessor costs about what the
 * store saves, so a handler that reads it once comes out even. Where the prototype is not
 * an Express app's (a plain Node server or another router), or already has a `voot` of
 * someone else's, the context is an own property.
 *
 * @module
 */
import { IncomingMessage } from 'node:http'
import type { VootContext } from '../../src/adapter-kit.js'

/** A request as far as this module needs it (Express's `Request`, Nest's on Express). */
export interface VootCarrier {
  voot?: VootContext | undefined
}

const contexts = new WeakMap<object, VootContext | undefined>()
// Per request prototype: whether `voot` resolves to this module's accessor there.
const throughAccessor = new WeakMap<object, boolean>()

const accessor = {
  configurable: true,
  enumerable: false,
  get(this: object): VootContext | undefined {
    return contexts.get(this)
  },
  set(this: object, value: VootContext | undefined): void {
    contexts.set(this, value)
  },
} satisfies PropertyDescriptor

/**
 * Whether requests of `prototype` reach this module's accessor, defining it first when
 * `prototype` is an Express app's (`app.request`, with an own `app`). It goes on the
 * prototype's own prototype, Express's `request`, which every app and sub-app of that
 * Express shares: a request leaving a sub-app gets its parent app's prototype back and
 * must still see its `voot`.
 */
function reachesAccessor(prototype: object): boolean {
  let owner: object | null = prototype
  while (owner !== null && !Object.hasOwn(owner, 'voot')) owner = Object.getPrototypeOf(owner) as object | null
  if (owner !== null) return Object.getOwnPropertyDescriptor(owner, 'voot')?.get === accessor.get
  const base = Object.hasOwn(prototype, 'app') ? (Object.getPrototypeOf(prototype) as object | null) : null
  if (base === null || base === IncomingMessage.prototype || base === Object.prototype) return false
  Object.defineProperty(base, 'voot', accessor)
  return true
}

/**
 * Sets `request.voot`: through the accessor on Express's request prototype (see the
 * module's comment for why), else as an own property.
 */
export function setVoot(request: VootCarrier, context: VootContext): void {
  const prototype = Object.getPrototypeOf(request) as object | null
  if (prototype !== null) {
    let viaAccessor = throughAccessor.get(prototype)
    if (viaAccessor === undefined) throughAccessor.set(prototype, (viaAccessor = reachesAccessor(prototype)))
    if (viaAccessor) {
      contexts.set(request, context)
      return
    }
  }
  request.voot = context
}

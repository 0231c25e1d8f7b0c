/**
 * Making a span ACTIVE in OpenTelemetry's context while a traced function runs, with nothing
 * but `@opentelemetry/api`.
 *
 * `start.bindStore(store, transform)` is the one hook a `TracingChannel` gives a subscriber
 * into the traced call: `runStores()` calls `transform(context)` and then
 * `store.run(value, next)` around the `start` event and the traced function. The store is
 * meant to be an `AsyncLocalStorage`, and OpenTelemetry keeps its own one private (others
 * reach for `context._getContextManager()._asyncLocalStorage`, see opentelemetry-js#6088).
 * Node's `runStores()` calls nothing on the store but `run`, so a store whose `run` is
 * `context.with(value, fn)` makes the value active through OpenTelemetry's public API,
 * whatever context manager the application registered, and even when it registers one
 * after instrumenting.
 *
 * Limits (documented in docs/operating.md):
 * - it leans on `runStores()` calling `store.run()` and nothing else (Node 20, 22, 24). A
 *   probe at start-up checks it; should a later Node call something else, the context
 *   manager's own AsyncLocalStorage is bound instead when it has one (the private field
 *   above), else spans are still made but do not nest.
 * - without a context manager (no SDK registered) nothing nests, as everywhere in OpenTelemetry.
 *
 * @module
 */
import type { AsyncLocalStorage } from 'node:async_hooks'
import { tracingChannel, type TracingChannel } from 'node:diagnostics_channel'
import { context, createContextKey, diag, ROOT_CONTEXT, type Context } from '@opentelemetry/api'

/** What `bindStore()` uses of a store. */
interface RunStore {
  run<R>(value: Context, next: () => R): R
}

/**
 * How spans become active during a traced call: `context-with` (the public API, the normal
 * case), `async-local-storage` (the context manager's own storage, when Node no longer
 * calls `store.run`), or `context-with-unverified` (no context manager answered the probe,
 * most likely none is registered yet; `context.with` takes effect once one is).
 */
export type Activation = 'context-with' | 'async-local-storage' | 'context-with-unverified'

/**
 * What a transform returns to leave the active context as it is during a traced call (no
 * span of ours): the traced function then runs without a context switch at all, which is
 * what keeps a warm decision cheap.
 */
export const KEEP_CONTEXT: Context = ROOT_CONTEXT.setValue(createContextKey('voot-guard/otel keep the active context'), true)

/**
 * Binds span-making transforms to the `start` channel of tracing channels.
 */
export interface ContextBinding {
  readonly activation: Activation
  /**
   * Runs `transform` at the start of each trace of `channel`; the context it returns is the
   * active one during the traced function ({@link KEEP_CONTEXT}: the active one stays).
   * Returns a function that undoes the binding. `transform` must not throw (Node reports a
   * throwing transform as an uncaught exception).
   */
  bind<C extends object>(channel: TracingChannel<unknown, C>, transform: (traced: C) => Context): () => void
}

const PROBE_CHANNEL = 'voot-guard:otel-probe'
const probeKey = createContextKey('voot-guard/otel probe')

/** Whether a store bound to a tracing channel's start makes its value active in OpenTelemetry's context. */
function activates(store: RunStore): boolean {
  const probe = tracingChannel<unknown, object>(PROBE_CHANNEL)
  const storage = store as unknown as AsyncLocalStorage<unknown>
  probe.start.bindStore(storage, () => context.active().setValue(probeKey, true))
  try {
    return probe.traceSync(() => context.active().getValue(probeKey) === true, {})
  } catch {
    return false
  } finally {
    probe.start.unbindStore(storage)
  }
}

/** The registered context manager's AsyncLocalStorage, when it is an `AsyncLocalStorageContextManager` (a private field). */
function managerStorage(): RunStore | undefined {
  try {
    const api = context as unknown as { _getContextManager?: () => { _asyncLocalStorage?: unknown } | undefined }
    const storage = api._getContextManager?.()?._asyncLocalStorage as Partial<RunStore> | undefined
    return typeof storage?.run === 'function' ? (storage as RunStore) : undefined
  } catch {
    return undefined
  }
}

/**
 * Chooses how traced calls get their span activated (see the module comment), probing once.
 */
export function createContextBinding(): ContextBinding {
  const viaApi: RunStore = { run: (value, next) => (value === KEEP_CONTEXT ? next() : context.with(value, next)) }
  let store = viaApi
  let activation: Activation = 'context-with'
  if (!activates(viaApi)) {
    const storage = managerStorage()
    if (storage !== undefined && activates(storage)) {
      store = storage
      activation = 'async-local-storage'
    } else {
      activation = 'context-with-unverified'
      diag.warn('voot-guard/otel: no OpenTelemetry context manager answered; voot-guard spans will not nest until one is registered')
    }
  }
  return {
    activation,
    bind(channel, transform) {
      const storage = store as unknown as AsyncLocalStorage<unknown>
      // The context manager's own storage knows nothing of KEEP_CONTEXT: it gets the active context.
      const toStore =
        store === viaApi
          ? transform
          : (traced: Parameters<typeof transform>[0]): Context => {
              const value = transform(traced)
              return value === KEEP_CONTEXT ? context.active() : value
            }
      channel.start.bindStore(storage, toStore)
      return () => {
        channel.start.unbindStore(storage)
      }
    },
  }
}

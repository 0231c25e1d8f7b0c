/**
 * Reading a data file again when it changes, for `voot-guard emulator --data FILE`: a valid
 * file replaces the data served; a bad one is reported (with its line and key) and the data
 * in force stays.
 *
 * @module
 */
import { unwatchFile, watchFile, type Stats } from 'node:fs'
import { loadEmulatorData } from './data-file.js'
import type { EmulatorData } from './data.js'

/** How often the file's modification time is looked at: polling works with every editor's way of saving. */
const INTERVAL_MS = 500

/**
 * Watches `path`; calls `changed` with each valid new data set, `failed` with the reason a
 * change was refused. Returns the function that stops watching.
 */
export function watchDataFile(path: string, changed: (data: EmulatorData) => void, failed: (error: Error) => void): () => void {
  let reading = Promise.resolve()
  const listener = (now: Stats, before: Stats): void => {
    if (now.mtimeMs === before.mtimeMs && now.size === before.size) return
    // One read at a time, in the order the changes came.
    reading = reading.then(async () => {
      try {
        changed(await loadEmulatorData(path))
      } catch (error) {
        failed(error as Error)
      }
    })
  }
  watchFile(path, { interval: INTERVAL_MS, persistent: false }, listener)
  return () => unwatchFile(path, listener)
}

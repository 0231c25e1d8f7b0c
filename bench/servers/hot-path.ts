/**
 * Figure 1 in its own (compiled, pinned) process. Usage: `hot-path.ts <operations> <batches>`.
 *
 * @module
 */
import { measureHotPath } from '../suites/hot-path.js'
import { serveParent } from './ipc.js'

const result = await measureHotPath({ operations: Number(process.argv[2] ?? '200000'), batches: Number(process.argv[3] ?? '7') })
serveParent({}, result)

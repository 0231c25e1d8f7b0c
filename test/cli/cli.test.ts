/**
 * The voot-guard CLI, run in-process with runCli against the emulator: exit codes,
 * tables and --json, the token's only source (VOOT_TOKEN), and the token never printed.
 */
import { createServer } from 'node:net'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { runCli, type CliIo } from '../../cli/index.js'
import { ADHOC_GROUP_ID, ORG_ID, PUBLIC_ADHOC_GROUP_ID, startEmulator, type Emulator } from '../../testing/index.js'

interface Run {
  code: number
  stdout: string
  stderr: string
}

let emulator: Emulator
/** Every byte any run wrote, to check that no token ever shows up in it. */
const everything: string[] = []
/** Every token given to a run through VOOT_TOKEN. */
const tokensUsed = new Set<string>()

async function run(argv: string[], env: Record<string, string | undefined> = {}, signal?: AbortSignal): Promise<Run> {
  let stdout = ''
  let stderr = ''
  const io: CliIo = {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env,
    ...(signal === undefined ? {} : { signal }),
  }
  // The real tokens only: the tests of malformed values use short, harmless ones.
  const token = env.VOOT_TOKEN?.trim().replace(/^Bearer /, '')
  if (token !== undefined && token.length >= 32) tokensUsed.add(token)
  const code = await runCli(argv, io)
  everything.push(stdout, stderr)
  return { code, stdout, stderr }
}

function check(token: string | undefined, ...args: string[]): Promise<Run> {
  return run(['check', '--base-url', emulator.baseUrl, ...args], { VOOT_TOKEN: token })
}

function groups(token: string | undefined, ...args: string[]): Promise<Run> {
  return run(['groups', '--base-url', emulator.baseUrl, ...args], { VOOT_TOKEN: token })
}

beforeAll(async () => {
  emulator = await startEmulator()
})
afterEach(() => {
  emulator.faults.clear()
})
afterAll(async () => {
  await emulator.close()
  // The last line of defence, over every run of this file.
  expect(tokensUsed.size).toBeGreaterThan(5)
  for (const token of tokensUsed) for (const output of everything) expect(output).not.toContain(token)
})

describe('voot-guard check', () => {
  it('exits 0 and says ALLOWED for an employee', async () => {
    const result = await check(emulator.issueToken('alice'), '--group', ORG_ID, '--role', 'admin')
    expect(result).toMatchObject({ code: 0, stderr: '' })
    expect(result.stdout).toMatch(/^ALLOWED\n/)
    expect(result.stdout).toContain(`group ${ORG_ID} (role admin or higher)`)
    expect(result.stdout).toMatch(/reason\s+member/)
  })

  it('exits 1 and says why for a student who is not an employee', async () => {
    const result = await check(emulator.issueToken('bob'), '--group', ORG_ID, '--role', 'admin')
    expect(result).toMatchObject({ code: 1, stderr: '' })
    expect(result.stdout).toMatch(/^DENIED\n/)
    expect(result.stdout).toMatch(/reason\s+role_too_low/)
  })

  it('exits 1 with not_member when the group service answers 404', async () => {
    const result = await check(emulator.issueToken('erin'), '--group', ORG_ID)
    expect(result.code).toBe(1)
    expect(result.stdout).toMatch(/reason\s+not_member/)
  })

  it('names the likely mistake when --base-url lacks its /groups prefix', async () => {
    const result = await run(['groups', '--base-url', new URL(emulator.baseUrl).origin], { VOOT_TOKEN: emulator.issueToken('alice') })
    expect(result.code).not.toBe(0)
    expect(result.stderr).toMatch(/HTTP 404/)
    expect(result.stderr).toMatch(/Hint: .*path prefix.*Dataporten serves the API under \/groups/)
  })

  it('prints the decision as JSON with --json', async () => {
    const allowed = await check(emulator.issueToken('alice'), '--group', ADHOC_GROUP_ID, '--role', 'owner', '--json')
    expect(allowed.code).toBe(0)
    expect(JSON.parse(allowed.stdout)).toEqual({
      outcome: 'allowed',
      allowed: true,
      reason: 'member',
      requirement: `group ${ADHOC_GROUP_ID} (role owner or higher)`,
      groupId: ADHOC_GROUP_ID,
    })
    const denied = await check(emulator.issueToken('bob'), '--group', 'fc:fs:fs:emne:example.org:MAT1100:1', '--json')
    expect(denied.code).toBe(1)
    expect(JSON.parse(denied.stdout)).toMatchObject({ outcome: 'denied', allowed: false, reason: 'inactive' })
  })

  it('exits 2 when the group service fails: the answer is unknown', async () => {
    const token = emulator.issueToken('alice')
    emulator.faults.add({ kind: 'status', status: 500 }, { token })
    const text = await check(token, '--group', ORG_ID)
    expect(text.code).toBe(2)
    expect(text.stdout).toBe('')
    expect(text.stderr).toMatch(/HTTP 500/)
    expect(text.stderr).toMatch(/unknown: neither allowed nor denied/)
    const json = await check(token, '--group', ORG_ID, '--json')
    expect(json.code).toBe(2)
    expect(JSON.parse(json.stdout)).toEqual({
      outcome: 'error',
      error: { code: 'ERR_UPSTREAM_STATUS', message: expect.any(String), upstreamStatus: 500 },
    })
  })

  it('exits 2 when the token is invalid, or not a personal token', async () => {
    const revoked = emulator.issueToken('alice')
    emulator.revokeToken(revoked)
    const invalid = await check(revoked, '--group', ORG_ID, '--json')
    expect(invalid.code).toBe(2)
    expect(JSON.parse(invalid.stdout).error).toMatchObject({ code: 'ERR_TOKEN_INVALID', upstreamStatus: 401 })
    expect(invalid.stderr).toMatch(/rejected the token in VOOT_TOKEN/)
    const client = await check(emulator.issueClientToken(), '--group', ORG_ID)
    expect(client.code).toBe(2)
    expect(client.stderr).toMatch(/personal token/)
  })

  it('honours --timeout', async () => {
    const token = emulator.issueToken('alice')
    emulator.faults.add({ kind: 'hang' }, { token })
    const result = await check(token, '--group', ORG_ID, '--timeout', '100', '--json')
    expect(result.code).toBe(2)
    expect(JSON.parse(result.stdout).error.code).toBe('ERR_UPSTREAM_TIMEOUT')
  })

  it('gives up its call when its signal aborts (Ctrl-C in the executable)', async () => {
    const token = emulator.issueToken('alice')
    emulator.faults.add({ kind: 'hang' }, { token })
    const stop = new AbortController()
    setTimeout(() => stop.abort(), 50)
    // The call's own deadline is far beyond the test's timeout: only the abort can end it in time.
    const args = ['check', '--base-url', emulator.baseUrl, '--group', ORG_ID, '--timeout', '60000', '--json']
    const result = await run(args, { VOOT_TOKEN: token }, stop.signal)
    expect(result.code).toBe(2)
    expect(JSON.parse(result.stdout).error.code).toBe('ERR_ABORTED')
    expect(result.stderr).toMatch(/interrupted/)
  })

  it('accepts another role order with --roles', async () => {
    const token = emulator.issueToken('bob')
    const result = await check(token, '--group', ORG_ID, '--role', 'prospect', '--roles', 'prospect,member,manager,admin,owner')
    expect(result.code).toBe(0)
    expect((await check(token, '--group', ORG_ID, '--role', 'prospect')).code).toBe(2)
  })

  it('reads the base URL from VOOT_BASE_URL when --base-url is absent', async () => {
    const token = emulator.issueToken('alice')
    const result = await run(['check', '--group', ORG_ID], { VOOT_TOKEN: token, VOOT_BASE_URL: emulator.baseUrl })
    expect(result.code).toBe(0)
    const missing = await run(['check', '--group', ORG_ID], { VOOT_TOKEN: token })
    expect(missing.code).toBe(2)
    expect(missing.stderr).toMatch(/--base-url is required \(or set VOOT_BASE_URL\)/)
  })

  it('refuses bad arguments with exit 2 before calling the group service', async () => {
    const token = emulator.issueToken('alice')
    emulator.resetLog()
    const cases: [string[], RegExp][] = [
      [['--group', ORG_ID, '--frob'], /Unknown option '--frob'/],
      [['--group', ORG_ID, '--timeout', 'soon'], /--timeout must be an integer from 1 to 600000/],
      [['--group', ORG_ID, '--role'], /Option '--role <value>' argument missing/],
      [['--role', 'admin'], /--group is required/],
      [['--group', '..'], /"\." and "\.\."/],
      [['--group', ORG_ID, '--role', 'boss'], /Unknown role "boss"/],
      [['--group', ORG_ID, '--roles', 'a,a'], /--roles: names "a" twice/],
    ]
    for (const [args, message] of cases) {
      const result = await check(token, ...args)
      expect(result.code, args.join(' ')).toBe(2)
      expect(result.stdout).toBe('')
      expect(result.stderr).toMatch(message)
      expect(result.stderr).toContain('Run "voot-guard check --help" for usage.')
    }
    const badUrl = await run(['check', '--base-url', 'ftp://groups.example.org', '--group', ORG_ID], { VOOT_TOKEN: token })
    expect(badUrl.code).toBe(2)
    expect(badUrl.stderr).toMatch(/^voot-guard check: --base-url: /)
    expect(emulator.count()).toBe(0)
  })
})

describe('voot-guard check --explain', () => {
  it('shows the tree for an allowed token, exit 0', async () => {
    const result = await check(emulator.issueToken('alice'), '--group', ORG_ID, '--role', 'admin', '--explain')
    expect(result).toMatchObject({ code: 0, stderr: '' })
    expect(result.stdout).toMatch(/^ALLOWED\n/)
    expect(result.stdout).toContain('How it was decided')
    expect(result.stdout).toContain(`  group ${ORG_ID} (role admin or higher): allowed, member  <- settled\n`)
    expect(result.stdout).toContain(`    me/groups (fetched, upstream): ${ORG_ID} listed, role admin, active\n`)
  })

  it('shows the tree for a denied token, exit 1, with the answer that denied it', async () => {
    const result = await check(emulator.issueToken('bob'), '--group', ORG_ID, '--role', 'admin', '--explain')
    expect(result).toMatchObject({ code: 1, stderr: '' })
    expect(result.stdout).toMatch(/^DENIED\n/)
    expect(result.stdout).toMatch(/reason\s+role_too_low: a member, but the role is below the required one/)
    expect(result.stdout).toContain(`  group ${ORG_ID} (role admin or higher): denied, role_too_low  <- settled\n`)
    expect(result.stdout).toContain(`    me/groups/${ORG_ID} (fetched, upstream): role member, active\n`)
  })

  it('shows dates, a 404, and the tree as JSON', async () => {
    const dave = await check(emulator.issueToken('dave'), '--group', 'fc:fs:fs:emne:example.org:INF1000:1', '--explain')
    expect(dave.code).toBe(1)
    expect(dave.stdout).toContain('role member, expired, until 2020-06-30T22:00:00Z')
    const erin = await check(emulator.issueToken('erin'), '--group', ORG_ID, '--explain')
    expect(erin.code).toBe(1)
    expect(erin.stdout).toContain(`me/groups (fetched, upstream): ${ORG_ID} not listed`)
    expect(erin.stdout).toContain(`me/groups/${ORG_ID} (fetched, upstream): not a member (404)`)
    const json = await check(emulator.issueToken('bob'), '--group', ORG_ID, '--role', 'admin', '--explain', '--json')
    expect(json.code).toBe(1)
    expect(JSON.parse(json.stdout)).toMatchObject({
      outcome: 'denied',
      reason: 'role_too_low',
      tree: { kind: 'group', outcome: 'denied', settled: true, answers: [{ endpoint: 'me/groups' }, { endpoint: 'me/groups/{groupid}' }] },
    })
  })

  it('exits 2 when the group service fails, as check does', async () => {
    const token = emulator.issueToken('alice')
    emulator.faults.add({ kind: 'status', status: 500 }, { token })
    const result = await check(token, '--group', ORG_ID, '--explain')
    expect(result.code).toBe(2)
    expect(result.stdout).toBe('')
    expect(result.stderr).toMatch(/unknown: neither allowed nor denied/)
  })
})

describe('the token', () => {
  it('is refused as a --token flag, with the reason, without echoing it', async () => {
    emulator.resetLog()
    const secret = emulator.issueToken('alice')
    for (const args of [['--token', secret], [`--token=${secret}`]]) {
      for (const command of ['check', 'groups']) {
        const result = await run([command, '--base-url', emulator.baseUrl, '--group', ORG_ID, ...args])
        expect(result.code).toBe(2)
        expect(result.stderr).toMatch(/--token is not accepted/)
        expect(result.stderr).toMatch(/VOOT_TOKEN environment variable/)
        expect(result.stderr).toMatch(/shell history/)
        expect(result.stdout + result.stderr).not.toContain(secret)
      }
    }
    const first = await run(['--token', secret, 'check'])
    expect(first.code).toBe(2)
    expect(first.stderr).toMatch(/--token is not accepted/)
    expect(first.stderr).not.toContain(secret)
    // Even when VOOT_TOKEN is set too: the flag itself is the mistake.
    const both = await run(['check', '--base-url', emulator.baseUrl, '--group', ORG_ID, '--token', secret], { VOOT_TOKEN: secret })
    expect(both.code).toBe(2)
    expect(emulator.count()).toBe(0)
  })

  it('is not echoed when pasted as a positional argument or as a command', async () => {
    const secret = emulator.issueToken('alice')
    const positional = await run(['check', '--base-url', emulator.baseUrl, '--group', ORG_ID, secret])
    expect(positional.code).toBe(2)
    // A token that happens to start with `-` reads as an unknown option instead.
    expect(positional.stderr).toMatch(secret.startsWith('-') ? /unknown option \(not repeated/ : /unexpected argument/)
    expect(positional.stderr).not.toContain(secret.slice(0, 6))
    const command = await run([secret])
    expect(command.code).toBe(2)
    expect(command.stderr).toMatch(/unknown command/)
    expect(command.stderr).not.toContain(secret)
  })

  it.each([
    ['a dash', '-Cx9_aZ3kQ0pLm2RtY7uVw1sNe4bHd6fJg8iKo5c'],
    ['two dashes', '--x9_aZ3kQ0pLm2RtY7uVw1sNe4bHd6fJg8iKo5c'],
    ['two dashes and a lowercase word', '--abcdefghijklmnopqrstuvwxyz'],
  ])('is not echoed when a pasted token starts with %s', async (_label, secret) => {
    const pasted = await run(['check', '--base-url', emulator.baseUrl, '--group', ORG_ID, secret])
    expect(pasted.code).toBe(2)
    expect(pasted.stderr).toMatch(/unknown option \(not repeated/)
    expect(pasted.stderr).not.toContain(secret.slice(0, 6))
  })

  it('still names a mistyped option', async () => {
    const typo = await run(['check', '--base-url', emulator.baseUrl, '--grup', ORG_ID])
    expect(typo.code).toBe(2)
    expect(typo.stderr).toContain("'--grup'")
  })

  it('must be set, and well-formed; its value is never shown', async () => {
    const unset = await check(undefined, '--group', ORG_ID)
    expect(unset.code).toBe(2)
    expect(unset.stderr).toMatch(/VOOT_TOKEN is not set/)
    const empty = await check('  ', '--group', ORG_ID)
    expect(empty.stderr).toMatch(/VOOT_TOKEN is not set/)
    const malformed = await check('not a token!', '--group', ORG_ID)
    expect(malformed.code).toBe(2)
    expect(malformed.stderr).toMatch(/VOOT_TOKEN does not hold a well-formed bearer token/)
    expect(malformed.stderr).not.toContain('not a token!')
  })

  it('tolerates a trailing newline and a copied "Bearer " prefix', async () => {
    const token = emulator.issueToken('alice')
    expect((await check(`${token}\n`, '--group', ORG_ID)).code).toBe(0)
    expect((await check(`Bearer ${token}`, '--group', ORG_ID)).code).toBe(0)
  })
})

describe('voot-guard groups', () => {
  it("lists alice's groups in a table", async () => {
    const result = await groups(emulator.issueToken('alice'))
    expect(result).toMatchObject({ code: 0, stderr: '' })
    const lines = result.stdout.split('\n')
    expect(lines[0]).toMatch(/^ID\s+TYPE\s+ROLE\s+ACTIVE\s+NAME$/)
    const row = (id: string): string[] => (lines.find((line) => line.startsWith(`${id} `)) ?? '').split(/\s{2,}/)
    expect(row(ORG_ID).slice(0, 4)).toEqual([ORG_ID, 'fc:org', 'admin', 'yes'])
    expect(row('fc:org:example.org:unit:AVD-U2').slice(0, 4)).toEqual(['fc:org:example.org:unit:AVD-U2', 'fc:orgunit', 'admin', 'yes'])
    expect(row(ADHOC_GROUP_ID).slice(0, 4)).toEqual([ADHOC_GROUP_ID, 'voot:ad-hoc', 'owner', 'yes'])
    expect(row(PUBLIC_ADHOC_GROUP_ID).slice(0, 4)).toEqual([PUBLIC_ADHOC_GROUP_ID, 'voot:ad-hoc', 'owner', 'yes'])
    expect(row(ORG_ID)[4]).toBe('Eksempeluniversitetet')
    expect(result.stdout).toContain('4 groups (active only')
    // Columns line up: every row starts its TYPE column where the header does.
    const typeColumn = (lines[0] ?? '').indexOf('TYPE')
    for (const line of lines.slice(1, 5)) expect(line.slice(typeColumn - 2, typeColumn)).toBe('  ')
  })

  it('lists inactive memberships only with --show-all', async () => {
    const token = emulator.issueToken('bob')
    const mat1100 = 'fc:fs:fs:emne:example.org:MAT1100:1'
    expect((await groups(token)).stdout).not.toContain(mat1100)
    const all = await groups(token, '--show-all')
    expect(all.code).toBe(0)
    expect(all.stdout).toMatch(new RegExp(`^${mat1100}\\s+fc:fs:emne\\s+member\\s+no\\s+MAT1100`, 'm'))
    expect(all.stdout).toContain('(including inactive ones)')
  })

  it('prints JSON with --json', async () => {
    const result = await groups(emulator.issueToken('bob'), '--json', '--show-all')
    expect(result.code).toBe(0)
    const parsed = JSON.parse(result.stdout) as { groups: { id: string; active: boolean; role: string; type: string; name: string }[] }
    expect(parsed.groups.map((g) => g.id)).toContain(ORG_ID)
    expect(parsed.groups.find((g) => g.id === ORG_ID)).toMatchObject({ role: 'member', type: 'fc:org', active: true })
    expect(parsed.groups.find((g) => g.id.includes('MAT1100'))).toMatchObject({ active: false, membership: { active: false } })
  })

  it('says so when there are no groups', async () => {
    const result = await groups(emulator.issueToken('erin'))
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/^No groups/)
    expect(JSON.parse((await groups(emulator.issueToken('erin'), '--json')).stdout)).toEqual({ groups: [] })
  })

  it('exits 2 on an upstream failure, an invalid token or a bad flag', async () => {
    const token = emulator.issueToken('alice')
    emulator.faults.add({ kind: 'invalid-json' }, { token })
    const failed = await groups(token, '--json')
    expect(failed.code).toBe(2)
    expect(JSON.parse(failed.stdout).error.code).toBe('ERR_UPSTREAM_BODY')
    expect((await groups('unknown-token')).code).toBe(2)
    const flag = await groups(token, '--group', ORG_ID)
    expect(flag.code).toBe(2)
    expect(flag.stderr).toMatch(/Unknown option '--group'/)
  })
})

describe('help and unknown commands', () => {
  it('prints help for the CLI and each command', async () => {
    const top = await run(['--help'])
    expect(top.code).toBe(0)
    expect(top.stdout).toMatch(/^Usage: voot-guard <command>/)
    for (const command of ['emulator', 'groups', 'check']) {
      expect(top.stdout).toContain(`  ${command} `)
      for (const argv of [
        [command, '--help'],
        [command, '-h'],
        ['help', command],
      ]) {
        const result = await run(argv)
        expect(result.code).toBe(0)
        expect(result.stdout).toMatch(new RegExp(`^Usage: voot-guard ${command}`))
      }
    }
    expect((await run(['check', '--help'])).stdout).toMatch(/Exit code: 0 allowed, 1 denied, 2 error/)
  })

  it('exits 2 without a command or with an unknown one', async () => {
    const none = await run([])
    expect(none.code).toBe(2)
    expect(none.stderr).toMatch(/^Usage:/)
    const unknown = await run(['chekc'])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toMatch(/unknown command "chekc"\. Commands: emulator, groups, check, gate\./)
  })

  it("refuses an unknown option with the command's own nearest option, never another command's (issue #52 item 4)", async () => {
    const cases: [string[], string][] = [
      [['check', '--gruop', ORG_ID], "voot-guard check: Unknown option '--gruop' (did you mean --group?)"],
      [['check', '--group', ORG_ID, '--rol', 'admin'], "Unknown option '--rol' (did you mean --role?)"],
      [['gate', '--config', 'gate.yaml', '--chek'], "Unknown option '--chek' (did you mean --check?)"],
      [['emulator', '--prot', '1'], "Unknown option '--prot' (did you mean --port?)"],
      [['groups', '--explian'], "Unknown option '--explian'; this command's options are --base-url, --timeout, --json, --show-all"],
    ]
    for (const [argv, message] of cases) {
      const result = await run(argv, { VOOT_TOKEN: 'never-read' })
      expect(result.code, argv.join(' ')).toBe(2)
      expect(result.stderr, argv.join(' ')).toContain(message)
    }
    // check has no --show-all (groups has): it is not suggested as if it were.
    const other = await run(['check', '--show-all'], { VOOT_TOKEN: 'never-read' })
    expect(other.stderr).toContain(
      "Unknown option '--show-all'; this command's options are --base-url, --timeout, --json, --explain, --group, --role, --roles",
    )
    expect(other.stderr).not.toMatch(/did you mean/)
  })

  it("check --help gives Feide's base URL with /groups and SURFconext's without (issue #52 item 4)", async () => {
    const help = (await run(['check', '--help'])).stdout
    expect(help).toContain(
      "Feide's with its\n                   /groups prefix, https://groups-api.dataporten.no/groups; SURFconext's\n                   without one, https://voot.surfconext.nl",
    )
    expect(help).toContain('voot-guard check --base-url https://voot.surfconext.nl --group ')
    expect(help).not.toMatch(/the group service with its \/groups prefix/)
    const missing = await run(['check', '--group', ORG_ID], { VOOT_TOKEN: 'never-read' })
    expect(missing.stderr).toContain('https://voot.surfconext.nl (SURFconext')
  })

  it('prints the version', async () => {
    const result = await run(['--version'])
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/^\d+\.\d+\.\d+/)
  })
})

describe('voot-guard emulator (in-process)', () => {
  it('serves, prints tokens that work, and closes when its signal aborts', async () => {
    const stop = new AbortController()
    let stdout = ''
    const done = runCli(['emulator', '--port', '0', '--json'], {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: () => true },
      env: {},
      signal: stop.signal,
    })
    while (!stdout.includes('\n')) await new Promise((resolve) => setTimeout(resolve, 5))
    const started = JSON.parse(stdout) as { baseUrl: string; authUrl: string; tokens: Record<string, string> }
    expect(Object.keys(started.tokens)).toEqual(expect.arrayContaining(['alice', 'bob', 'carol', 'dave', 'erin']))
    const allowed = await run(['check', '--base-url', started.baseUrl, '--group', ORG_ID, '--role', 'admin'], {
      VOOT_TOKEN: started.tokens.alice,
    })
    expect(allowed.code).toBe(0)
    const discovery = await fetch(`${started.authUrl}/.well-known/openid-configuration`)
    expect(discovery.status).toBe(200)
    await discovery.body?.cancel()
    stop.abort()
    expect(await done).toBe(0)
    await expect(fetch(`${started.baseUrl}/grouptypes`)).rejects.toThrow()
  })

  it('prints a readable guide without --json', async () => {
    const stop = new AbortController()
    let stdout = ''
    const done = runCli(['emulator', '--port', '0'], {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: () => true },
      env: {},
      signal: stop.signal,
    })
    while (!stdout.includes('Stop with Ctrl-C')) await new Promise((resolve) => setTimeout(resolve, 5))
    expect(stdout).toMatch(/base URL\s+http:\/\/127\.0\.0\.1:\d+\/groups/)
    for (const user of ['alice', 'bob', 'carol', 'dave', 'erin']) expect(stdout).toMatch(new RegExp(`^${user}\\s+\\S.*\\s[\\w-]{43}$`, 'm'))
    stop.abort()
    expect(await done).toBe(0)
    expect(stdout).toMatch(/Emulator stopped\.\n$/)
  })

  it('says where its console is, and that of each of several services, with their real paths, and how to stop once', async () => {
    const started = async (args: string[]): Promise<{ stdout: string; stop: () => Promise<number> }> => {
      const stop = new AbortController()
      let stdout = ''
      const done = runCli(['emulator', '--port', '0', ...args], {
        stdout: { write: (text: string) => (stdout += text) },
        stderr: { write: () => true },
        env: {},
        signal: stop.signal,
      })
      while (!stdout.includes('Stop with Ctrl-C')) await new Promise((resolve) => setTimeout(resolve, 5))
      return {
        stdout,
        stop: () => {
          stop.abort()
          return done
        },
      }
    }
    const page = async (url: string): Promise<string> => {
      const answer = await fetch(url)
      expect(answer.status, url).toBe(200)
      return answer.text()
    }

    const one = await started([])
    try {
      const origin = /base URL\s+(http:\/\/127\.0\.0\.1:\d+)\/groups/.exec(one.stdout)?.[1]
      expect(origin, one.stdout).toBeDefined()
      expect(one.stdout).toMatch(new RegExp(`^ {2}console {3}${origin!}/_emulator/ {3}\\(`, 'm'))
      expect(one.stdout).toContain('dataporten (Feide/Dataporten, under /groups)')
      expect(await page(`${origin!}/_emulator/`)).toContain('<h1>voot-guard emulator console: Feide</h1>')
    } finally {
      expect(await one.stop()).toBe(0)
    }

    const several = await started(['--services', 'feide=dataporten,surf=openconext'])
    try {
      const { stdout } = several
      expect(stdout.match(/Stop with Ctrl-C\./g)).toHaveLength(1)
      expect(stdout).toMatch(/Stop with Ctrl-C\.\n$/)
      expect(stdout).toContain('dataporten (Feide/Dataporten, under /feide/groups)')
      expect(stdout).toContain('openconext (SURFconext OpenConext-voot, under /surf)')
      expect(stdout).not.toContain('at the root')
      const consoles = [...stdout.matchAll(/^ {2}console +(http:\/\/\S+)/gm)].map((match) => match[1] as string)
      const origin = new URL(consoles[0] ?? '').origin
      expect(consoles).toEqual([`${origin}/_emulator/`, `${origin}/feide/_emulator/`, `${origin}/surf/_emulator/`])
      // Each address printed is served, and each service's console names its service.
      expect(await page(consoles[0]!)).toContain('surf (openconext)')
      expect(await page(consoles[1]!)).toContain('<h1>voot-guard emulator console: Feide (feide)</h1>')
      expect(await page(consoles[2]!)).toContain('<h1>voot-guard emulator console: SURFconext (surf)</h1>')
    } finally {
      expect(await several.stop()).toBe(0)
    }
  })

  it('serves several services with --services, each with tokens of its own that work there only', async () => {
    const stop = new AbortController()
    let stdout = ''
    const done = runCli(['emulator', '--port', '0', '--services', 'feide=dataporten,surf=openconext', '--json'], {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: () => true },
      env: {},
      signal: stop.signal,
    })
    while (!stdout.includes('\n')) await new Promise((resolve) => setTimeout(resolve, 5))
    type Started = { baseUrl: string; dialect: string; tokens: Record<string, string> }
    const { services } = JSON.parse(stdout) as { services: Record<'feide' | 'surf', Started> }
    expect([services.feide.dialect, services.surf.dialect]).toEqual(['dataporten', 'openconext'])
    const ask = (service: Started, token: string | undefined) =>
      fetch(`${service.baseUrl}/me/groups`, { headers: { authorization: `Bearer ${token}` } }).then(async (answer) => {
        await answer.body?.cancel()
        return answer.status
      })
    expect(await ask(services.feide, services.feide.tokens.alice)).toBe(200)
    expect(await ask(services.surf, services.surf.tokens.alice)).toBe(200)
    expect(await ask(services.surf, services.feide.tokens.alice)).toBe(401)
    stop.abort()
    expect(await done).toBe(0)
    const mixed = await run(['emulator', '--port', '0', '--services', 'feide=dataporten', '--dialect', 'openconext'])
    expect(mixed.code).toBe(2)
    expect(mixed.stderr).toContain('not with --dialect or --data')
    const unknown = await run(['emulator', '--port', '0', '--services', 'feide=dataport'])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain('--services takes NAME=DIALECT')
  })

  it('exits 2 for a port in use, a bad port, or a bad data file', async () => {
    const blocker = createServer()
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
    const { port } = blocker.address() as { port: number }
    try {
      const taken = await run(['emulator', '--port', String(port)])
      expect(taken.code).toBe(2)
      expect(taken.stderr).toMatch(new RegExp(`--port ${port}: the address is in use`))
    } finally {
      await new Promise((resolve) => blocker.close(resolve))
    }
    const bad = await run(['emulator', '--port', '70000'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/--port must be an integer from 0 to 65535/)
    const missing = await run(['emulator', '--port', '0', '--data', 'no/such/file.json', '--json'])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toMatch(/--data: no\/such\/file\.json: cannot read the data file/)
    expect(JSON.parse(missing.stdout).error.code).toBe('ERR_INVALID_OPTION')
  })
})

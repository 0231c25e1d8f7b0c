/**
 * The help and docs/cli.md say the same of each command, and the program takes what they
 * say: every option a command's `--help` names is in docs/cli.md's section for the command
 * and the other way round; each usage line of a command (in its own `--help`, in its
 * parent's, in the page's synopsis) offers the same options; every option named is one the
 * command accepts; the commands `voot-guard --help` lists are the page's sections; and
 * the gate's help names every proxy docs/gate.md has a snippet for.
 */
import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { runCli } from '../../cli/index.js'

/** The commands, a subcommand after its parent's name. */
const COMMANDS = ['emulator', 'emulator members', 'emulator fault', 'emulator sessions', 'groups', 'check', 'gate'] as const
type CommandPath = (typeof COMMANDS)[number]

async function cli(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = ''
  let stderr = ''
  const code = await runCli([...args], {
    stdout: { write: (text) => (stdout += text) },
    stderr: { write: (text) => (stderr += text) },
    env: {},
  })
  return { code, stdout, stderr }
}

const help = async (path: CommandPath): Promise<string> => {
  const result = await cli([...path.split(' '), '--help'])
  expect(result.code, path).toBe(0)
  return result.stdout
}

/** The long options a text names (`--help` aside: every command has it). */
function flags(text: string): Set<string> {
  return new Set(
    [...text.matchAll(/(?<![\w-])--([a-z][a-z-]*)/g)].map((match) => `--${match[1] as string}`).filter((flag) => flag !== '--help'),
  )
}

/** The command a usage line is of: the longest command path after `voot-guard `. */
function commandOf(line: string): CommandPath | undefined {
  const at = line.indexOf('voot-guard ')
  if (at < 0) return undefined
  const words = line.slice(at + 'voot-guard '.length).trim()
  return [...COMMANDS].sort((a, b) => b.length - a.length).find((path) => words === path || words.startsWith(`${path} `))
}

/** The usage lines of a text (a help's `Usage:` block, or a synopsis), a continued line joined to the one before, by command. */
function usages(block: string): Map<CommandPath, string[]> {
  const byCommand = new Map<CommandPath, string[]>()
  let last: CommandPath | undefined
  for (const line of block.split('\n')) {
    const command = commandOf(line)
    if (command !== undefined) {
      last = command
      byCommand.set(command, [...(byCommand.get(command) ?? []), line])
    } else if (last !== undefined && line.trim() !== '') {
      const lines = byCommand.get(last)!
      lines[lines.length - 1] += ` ${line.trim()}`
    }
  }
  return byCommand
}

/** A help's `Usage:` block: from `Usage:` to the first blank line. */
const usageBlock = (text: string): string => /^Usage: [\s\S]*?(?=\n\n|$)/.exec(text)?.[0] ?? ''

/** The options of a command's usage lines, all of them together. */
const usageFlags = (lines: readonly string[] | undefined): Set<string> => flags((lines ?? []).join('\n'))

/** docs/cli.md's section for a command: from its heading (`## \`voot-guard gate\``) to the next heading. */
function section(doc: string, path: CommandPath): string {
  const heading = new RegExp(`^#{2,3} \`voot-guard ${path}\`\\n`, 'm').exec(doc)
  if (heading === null) throw new Error(`docs/cli.md has no section "voot-guard ${path}"`)
  const rest = doc.slice(heading.index + heading[0].length)
  const next = rest.search(/^#{1,6} /m)
  return next < 0 ? rest : rest.slice(0, next)
}

/** The page's synopsis: its `sh` block of `voot-guard` lines. */
function synopsis(doc: string): string {
  const block = [...doc.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] as string).find((text) => text.startsWith('voot-guard '))
  if (block === undefined) throw new Error('docs/cli.md has no synopsis')
  return block
}

/** A command's options as its help lists them: its text without its subcommands' usage lines. */
async function helpFlags(path: CommandPath): Promise<Set<string>> {
  const text = await help(path)
  const own = usages(usageBlock(text))
  const subcommandLines = [...own].filter(([command]) => command !== path).flatMap(([, lines]) => lines)
  const others = usageFlags(subcommandLines)
  const mine = usageFlags(own.get(path))
  // An option of a subcommand's usage line counts only where the command's own text names it too.
  const body = text.slice(usageBlock(text).length)
  return new Set([...flags(text)].filter((flag) => !others.has(flag) || mine.has(flag) || flags(body).has(flag)))
}

const read = (path: string) => readFile(new URL(`../../${path}`, import.meta.url), 'utf8')

describe('voot-guard --help and docs/cli.md', () => {
  it.each(COMMANDS)('name the same options for %s', async (path) => {
    const doc = await read('docs/cli.md')
    expect([...flags(section(doc, path))].sort(), `docs/cli.md's section for ${path} against its --help`).toEqual(
      [...(await helpFlags(path))].sort(),
    )
  })

  it.each(COMMANDS)('give %s the same usage: its own --help, its parent’s, the synopsis', async (path) => {
    const own = usageFlags(usages(usageBlock(await help(path))).get(path))
    expect(own.size).toBeGreaterThan(0)
    const doc = await read('docs/cli.md')
    expect([...usageFlags(usages(synopsis(doc)).get(path))].sort(), 'the synopsis of docs/cli.md').toEqual([...own].sort())
    const parent = path.includes(' ') ? (path.split(' ')[0] as CommandPath) : undefined
    if (parent !== undefined) {
      expect([...usageFlags(usages(usageBlock(await help(parent))).get(path))].sort(), `voot-guard ${parent} --help`).toEqual(
        [...own].sort(),
      )
    }
  })

  it.each(COMMANDS)('name only options %s accepts', async (path) => {
    // A subcommand with its action first, as it is run (an option without its value stops it
    // before it calls anything); a command with --help after the option, so that it only parses.
    const before =
      path === 'emulator members' ? ['add'] : path === 'emulator fault' ? ['clear'] : path === 'emulator sessions' ? ['end', 'alice'] : []
    const after = before.length === 0 ? ['--help'] : []
    for (const flag of await helpFlags(path)) {
      const result = await cli([...path.split(' '), ...before, flag, ...after])
      expect(`${result.stdout}${result.stderr}`, `${path} ${flag}`).not.toMatch(/unknown option/i)
    }
    // And the check itself can fail: an option no command has.
    expect((await cli([...path.split(' '), ...before, '--no-such-option', ...after])).stderr).toMatch(/unknown option/i)
  })

  it('list the same commands: voot-guard --help and the sections of docs/cli.md', async () => {
    const top = (await cli(['--help'])).stdout
    const listed = [...top.matchAll(/^ {2}([a-z]+) {2,}/gm)].map((match) => match[1] as string)
    const doc = await read('docs/cli.md')
    const sections = [...doc.matchAll(/^## `voot-guard ([a-z]+)`$/gm)].map((match) => match[1] as string)
    expect(listed.length).toBeGreaterThan(0)
    expect(sections).toEqual(listed)
    expect([...usages(synopsis(doc)).keys()].sort()).toEqual([...COMMANDS].sort())
  })

  it('name every proxy docs/gate.md has a snippet for, in gate --help, its summary and docs/cli.md', async () => {
    const gateDoc = await read('docs/gate.md')
    const from = gateDoc.indexOf('\n## nginx (')
    const to = gateDoc.indexOf('\n## Security')
    const proxies = [...gateDoc.slice(from, to).matchAll(/^## ([\w-]+)/gm)].map((match) => match[1] as string)
    expect(proxies).toEqual(expect.arrayContaining(['nginx', 'Caddy', 'HAProxy', 'Apache', 'Traefik', 'Envoy']))
    const gateHelp = (await help('gate')).replace(/\s+/g, ' ')
    const summary = /^ {2}gate {2,}(.*)$/m.exec((await cli(['--help'])).stdout)?.[1] ?? ''
    const cliDoc = section(await read('docs/cli.md'), 'gate').replace(/\s+/g, ' ')
    for (const proxy of proxies) {
      expect(gateHelp, `gate --help names ${proxy}`).toContain(proxy)
      expect(cliDoc, `docs/cli.md's gate section names ${proxy}`).toContain(proxy)
      if (proxy !== 'ingress-nginx') expect(summary, `the gate's summary names ${proxy}`).toContain(proxy)
    }
  })
})

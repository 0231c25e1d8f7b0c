// The API report: what each entry point of `exports` makes public, as TypeScript prints it,
// one markdown file per subpath in `api/`. The files are committed, so a change of the public
// surface is a visible diff in review. This is what API Extractor's report does, but it reads
// the source entry points with the project's own TypeScript, so it needs no build of dist/.
//
//   node scripts/api-report.mjs          write api/*.api.md (npm run api:report)
//   node scripts/api-report.mjs --check  exit 1, naming each changed subpath and symbol, when
//                                        the committed files differ (npm run api:check)
//
// Each exported name is a `## ` section, sorted by name: its kind and its declaration with
// comments and bodies removed. Functions and constants are printed from their types (so an
// inferred return type counts); interfaces, classes and enums as declared, classes without
// private members; type aliases as declared plus, where it differs, their one-level expansion.
import { readFileSync, readdirSync, mkdirSync, writeFileSync, rmSync } from 'node:fs'
import { dirname, join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import * as prettier from 'prettier'
import ts from 'typescript'

const root = dirname(dirname(fileURLToPath(import.meta.url)))
const apiDir = join(root, 'api')
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))

/** The subpaths of `exports` with types, each mapped from its built `.d.ts` back to source. */
function entryPoints() {
  const entries = []
  for (const [subpath, entry] of Object.entries(pkg.exports)) {
    const types = typeof entry === 'object' && entry !== null ? entry.types : undefined
    if (typeof types !== 'string') continue
    const built = /^\.\/dist\/(.+)\.d\.ts$/.exec(types)
    if (built === null) throw new Error(`exports["${subpath}"].types is not under ./dist/: ${types}`)
    const specifier = subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice('./'.length)}`
    entries.push({
      specifier,
      source: `${built[1]}.ts`,
      report: `${specifier.replaceAll('/', '-')}.api.md`,
    })
  }
  return entries
}

/** One program for all entry points, with the repository's compiler options. */
function createProgram(entries) {
  const configPath = join(root, 'tsconfig.json')
  const config = ts.readConfigFile(configPath, ts.sys.readFile)
  if (config.error) throw new Error(ts.flattenDiagnosticMessageText(config.error.messageText, '\n'))
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, root, { noEmit: true }, configPath)
  return ts.createProgram({ rootNames: entries.map((e) => join(root, e.source)), options })
}

const printer = ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed })
const builderFlags =
  ts.NodeBuilderFlags.NoTruncation |
  ts.NodeBuilderFlags.MultilineObjectLiterals |
  ts.NodeBuilderFlags.WriteTypeArgumentsOfSignature |
  ts.NodeBuilderFlags.UseAliasDefinedOutsideCurrentScope |
  ts.NodeBuilderFlags.IgnoreErrors
const { factory } = ts

/** Printed text never holds this machine's paths (an inaccessible type prints as `import("…")`). */
function portable(text) {
  return text.replaceAll(`${root}${sep}`, '').replaceAll(root, '.')
}

function hasModifier(node, kind) {
  return ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === kind)
}

/** Modifiers that say something about the API; `export`, `default`, `declare` and decorators go. */
function keptModifiers(node) {
  const dropped = new Set([ts.SyntaxKind.ExportKeyword, ts.SyntaxKind.DefaultKeyword, ts.SyntaxKind.DeclareKeyword])
  return (ts.canHaveModifiers(node) ? (ts.getModifiers(node) ?? []) : []).filter((m) => !dropped.has(m.kind))
}

/** Renders the declarations of one module with one checker. */
function createRenderer(checker, sourceFile) {
  // Original nodes print from their own file's text: pass the file the declaration is in.
  const print = (node, file = sourceFile) => portable(printer.printNode(ts.EmitHint.Unspecified, node, file))
  const typeNode = (type, extra = 0) =>
    checker.typeToTypeNode(type, sourceFile, builderFlags | extra) ?? factory.createKeywordTypeNode(ts.SyntaxKind.AnyKeyword)

  function functionText(symbol, name) {
    const type = checker.getTypeOfSymbol(symbol)
    return type.getCallSignatures().map((signature) => {
      const node = checker.signatureToSignatureDeclaration(signature, ts.SyntaxKind.FunctionDeclaration, sourceFile, builderFlags)
      const named = factory.updateFunctionDeclaration(
        node,
        undefined,
        undefined,
        factory.createIdentifier(name),
        node.typeParameters,
        node.parameters,
        node.type,
        undefined,
      )
      return print(named)
    })
  }

  function variableText(symbol, declaration, name) {
    const list = declaration.parent
    const keyword = list.flags & ts.NodeFlags.Const ? 'const' : list.flags & ts.NodeFlags.Let ? 'let' : 'var'
    const type = checker.getTypeOfSymbol(symbol)
    // `typeof X` of a symbol constant says nothing; declaration files write `unique symbol`.
    const text = type.flags & ts.TypeFlags.UniqueESSymbol ? 'unique symbol' : print(typeNode(type))
    return `${keyword} ${name}: ${text}`
  }

  /** Whether a written type names other types, so that expanding it shows something new. */
  function refersToTypes(node) {
    const naming = [
      ts.SyntaxKind.TypeReference,
      ts.SyntaxKind.TypeQuery,
      ts.SyntaxKind.IndexedAccessType,
      ts.SyntaxKind.MappedType,
      ts.SyntaxKind.ConditionalType,
      ts.SyntaxKind.TypeOperator,
      ts.SyntaxKind.ExpressionWithTypeArguments,
    ]
    return naming.includes(node.kind) || (ts.forEachChild(node, (child) => refersToTypes(child) || undefined) ?? false)
  }

  /** The members of an interface instance (`Guards<RequestHandler>`) as a type literal. */
  function membersOf(type) {
    const members = checker.getPropertiesOfType(type).map((property) => {
      const declaration = property.valueDeclaration ?? property.declarations?.[0]
      const readonly =
        declaration && hasModifier(declaration, ts.SyntaxKind.ReadonlyKeyword)
          ? [factory.createModifier(ts.SyntaxKind.ReadonlyKeyword)]
          : []
      const optional = property.flags & ts.SymbolFlags.Optional ? factory.createToken(ts.SyntaxKind.QuestionToken) : undefined
      return factory.createPropertySignature(readonly, property.name, optional, typeNode(checker.getTypeOfSymbol(property)))
    })
    const calls = type
      .getCallSignatures()
      .map((signature) => checker.signatureToSignatureDeclaration(signature, ts.SyntaxKind.CallSignature, sourceFile, builderFlags))
    const news = type
      .getConstructSignatures()
      .map((signature) => checker.signatureToSignatureDeclaration(signature, ts.SyntaxKind.ConstructSignature, sourceFile, builderFlags))
    return print(factory.createTypeLiteralNode([...calls, ...news, ...members]))
  }

  function typeAliasText(symbol, declaration) {
    const file = declaration.getSourceFile()
    const declared = print(
      factory.createTypeAliasDeclaration(keptModifiers(declaration), declaration.name, declaration.typeParameters, declaration.type),
      file,
    )
    if (!refersToTypes(declaration.type)) return declared
    const type = checker.getDeclaredTypeOfSymbol(symbol)
    // An array or a tuple is what its declaration says: its members (the array methods, with
    // symbol keys the compiler numbers afresh as other types come and go) add nothing.
    if (checker.isArrayType(type) || checker.isTupleType(type)) return declared
    let expanded = print(typeNode(type, ts.NodeBuilderFlags.InTypeAlias))
    const isInterface =
      type.flags & ts.TypeFlags.Object &&
      (type.objectFlags & ts.ObjectFlags.Reference ? type.target : type).objectFlags & ts.ObjectFlags.Interface
    if (isInterface) expanded = membersOf(type)
    // The checker writes string literals with double quotes; the source may use single ones.
    if (expanded === print(declaration.type, file).replaceAll("'", '"')) return declared
    // The expansion is written as a second declaration of the name, so that it is formatted too.
    const placeholder = factory.createKeywordTypeNode(ts.SyntaxKind.UnknownKeyword)
    const head = print(factory.createTypeAliasDeclaration(undefined, declaration.name, declaration.typeParameters, placeholder), file)
    return `${declared}\n// expanded one level:\n${head.replace(/unknown;$/, expanded)}`
  }

  /** A class member is public surface unless it is `private` or `#private`. */
  function isPublicMember(member) {
    return !hasModifier(member, ts.SyntaxKind.PrivateKeyword) && !(member.name && ts.isPrivateIdentifier(member.name))
  }

  /** A constructor's parameters as callers see them: parameter properties keep only what is public. */
  function constructorParameter(parameter) {
    const modifiers = keptModifiers(parameter).filter((m) => m.kind !== ts.SyntaxKind.Decorator)
    const isPrivate = modifiers.some((m) => m.kind === ts.SyntaxKind.PrivateKeyword)
    const type = parameter.type ?? typeNode(checker.getTypeAtLocation(parameter))
    return factory.updateParameterDeclaration(
      parameter,
      isPrivate ? [] : modifiers,
      parameter.dotDotDotToken,
      parameter.name,
      parameter.questionToken ?? (parameter.initializer ? factory.createToken(ts.SyntaxKind.QuestionToken) : undefined),
      type,
      undefined,
    )
  }

  function classMember(member) {
    // `async` is how a body is written, not what callers see (the return type says Promise).
    const modifiers = keptModifiers(member).filter((m) => m.kind !== ts.SyntaxKind.Decorator && m.kind !== ts.SyntaxKind.AsyncKeyword)
    const returnType = (node) => node.type ?? typeNode(checker.getReturnTypeOfSignature(checker.getSignatureFromDeclaration(node)))
    if (ts.isConstructorDeclaration(member))
      return factory.createConstructorDeclaration(modifiers, member.parameters.map(constructorParameter), undefined)
    if (ts.isMethodDeclaration(member))
      return factory.createMethodDeclaration(
        modifiers,
        member.asteriskToken,
        member.name,
        member.questionToken,
        member.typeParameters,
        member.parameters.map(constructorParameter),
        returnType(member),
        undefined,
      )
    if (ts.isPropertyDeclaration(member))
      return factory.createPropertyDeclaration(
        modifiers,
        member.name,
        member.questionToken ?? member.exclamationToken,
        member.type ?? typeNode(checker.getTypeAtLocation(member)),
        undefined,
      )
    if (ts.isGetAccessorDeclaration(member))
      return factory.createGetAccessorDeclaration(modifiers, member.name, [], returnType(member), undefined)
    if (ts.isSetAccessorDeclaration(member))
      return factory.createSetAccessorDeclaration(modifiers, member.name, member.parameters.map(constructorParameter), undefined)
    if (ts.isClassStaticBlockDeclaration(member) || ts.isSemicolonClassElement(member)) return undefined
    return member
  }

  /** With overloads, callers see only the overload signatures, not the implementation's. */
  function isOverloadImplementation(member, members) {
    if (member.body === undefined || !(ts.isConstructorDeclaration(member) || ts.isMethodDeclaration(member))) return false
    const key = (m) => (ts.isConstructorDeclaration(m) ? 'constructor' : m.name.getText())
    return members.some((other) => other !== member && other.kind === member.kind && other.body === undefined && key(other) === key(member))
  }

  function classText(declaration, name) {
    const members = declaration.members
      .filter(isPublicMember)
      .filter((m) => !isOverloadImplementation(m, declaration.members))
      .map(classMember)
      .filter((m) => m !== undefined)
    const file = declaration.getSourceFile()
    const text = print(
      factory.createClassDeclaration(
        keptModifiers(declaration).filter((m) => m.kind !== ts.SyntaxKind.Decorator),
        factory.createIdentifier(name),
        declaration.typeParameters,
        declaration.heritageClauses,
        members,
      ),
      file,
    )
    // A base class that is a value (a mixin, NestJS's ConfigurableModuleClass) brings static
    // and instance members the `extends` clause does not show: print its type.
    const bases = (declaration.heritageClauses ?? [])
      .filter((clause) => clause.token === ts.SyntaxKind.ExtendsKeyword)
      .flatMap((clause) => clause.types)
      .filter((base) => {
        const symbol = checker.getSymbolAtLocation(base.expression)
        const target = symbol && symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
        return target !== undefined && (target.flags & ts.SymbolFlags.Class) === 0
      })
      .map(
        (base) =>
          `// ${print(base.expression, file)}: ${print(typeNode(checker.getTypeAtLocation(base.expression)))
            .split('\n')
            .join('\n// ')}`,
      )
    return [text, ...bases].join('\n')
  }

  function declarationText(symbol, declaration, name) {
    if (ts.isFunctionDeclaration(declaration)) return undefined // printed once, from the symbol's signatures
    if (ts.isVariableDeclaration(declaration)) return variableText(symbol, declaration, name)
    if (ts.isTypeAliasDeclaration(declaration)) return typeAliasText(symbol, declaration)
    if (ts.isClassDeclaration(declaration)) return classText(declaration, name)
    const file = declaration.getSourceFile()
    if (ts.isInterfaceDeclaration(declaration)) {
      const { name: own, typeParameters, heritageClauses, members } = declaration
      return print(
        factory.updateInterfaceDeclaration(declaration, keptModifiers(declaration), own, typeParameters, heritageClauses, members),
        file,
      )
    }
    if (ts.isEnumDeclaration(declaration))
      return print(factory.updateEnumDeclaration(declaration, keptModifiers(declaration), declaration.name, declaration.members), file)
    if (ts.isModuleDeclaration(declaration) || ts.isSourceFile(declaration)) {
      const members = checker
        .getExportsOfModule(symbol)
        .map((m) => m.name)
        .sort(byCodePoint)
      return `namespace ${name} { ${members.join(', ')} }`
    }
    return print(declaration, file)
  }

  const kindOf = (declaration) => {
    if (ts.isFunctionDeclaration(declaration)) return 'function'
    if (ts.isVariableDeclaration(declaration)) return declaration.parent.flags & ts.NodeFlags.Const ? 'const' : 'variable'
    if (ts.isTypeAliasDeclaration(declaration)) return 'type'
    if (ts.isClassDeclaration(declaration)) return 'class'
    if (ts.isInterfaceDeclaration(declaration)) return 'interface'
    if (ts.isEnumDeclaration(declaration)) return 'enum'
    if (ts.isModuleDeclaration(declaration) || ts.isSourceFile(declaration)) return 'namespace'
    return ts.SyntaxKind[declaration.kind]
  }

  /** One `## ` section for one exported name. */
  function section(exported) {
    const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported
    const name = exported.name
    const declarations = [...(symbol.declarations ?? [])].sort((a, b) => byCodePoint(location(a), location(b)))
    const kinds = [...new Set(declarations.map(kindOf))]
    const blocks = []
    if (declarations.some(ts.isFunctionDeclaration)) blocks.push(...functionText(symbol, name))
    for (const declaration of declarations) {
      const text = declarationText(symbol, declaration, name)
      if (text !== undefined) blocks.push(text)
    }
    const notes = []
    if (symbol.name !== name && symbol.name !== 'default' && !symbol.name.startsWith('"')) notes.push(`declared as \`${symbol.name}\``)
    if (declarations.some((d) => ts.getJSDocDeprecatedTag(d) !== undefined)) notes.push('deprecated')
    const heading = `## \`${name}\`: ${kinds.join(' + ')}${notes.length > 0 ? ` (${notes.join(', ')})` : ''}`
    return `${heading}\n\n\`\`\`ts\n${blocks.join('\n')}\n\`\`\`\n`
  }

  const location = (node) => `${relative(root, node.getSourceFile().fileName)}:${String(node.getStart()).padStart(8, '0')}`

  /** `declare global` and `declare module 'x'` blocks of the entry file: types it adds to others. */
  function augmentations() {
    return sourceFile.statements
      .filter((s) => ts.isModuleDeclaration(s) && (s.flags & ts.NodeFlags.GlobalAugmentation || ts.isStringLiteral(s.name)))
      .map((s) => {
        const target = s.flags & ts.NodeFlags.GlobalAugmentation ? 'global' : `'${s.name.text}'`
        return `## \`declare ${target}\`: augmentation\n\n\`\`\`ts\n${print(s)}\n\`\`\`\n`
      })
  }

  return { section, augmentations }
}

function byCodePoint(a, b) {
  return a < b ? -1 : a > b ? 1 : 0
}

/**
 * The reports, by file name, for today's source. They are formatted with the repository's
 * Prettier settings, so that `prettier --check` and the report agree on every line.
 */
export async function generate() {
  const entries = entryPoints()
  const program = createProgram(entries)
  const checker = program.getTypeChecker()
  const reports = new Map()
  for (const entry of entries) {
    const sourceFile = program.getSourceFile(join(root, entry.source))
    if (sourceFile === undefined) throw new Error(`${entry.source} (exports of ${entry.specifier}) not found`)
    const moduleSymbol = checker.getSymbolAtLocation(sourceFile)
    const exported = moduleSymbol ? checker.getExportsOfModule(moduleSymbol) : []
    const { section, augmentations } = createRenderer(checker, sourceFile)
    const sections = [...exported].sort((a, b) => byCodePoint(a.name, b.name)).map(section)
    const header = [
      `# API report: \`${entry.specifier}\``,
      '',
      `Generated from \`${entry.source}\` by \`npm run api:report\`; do not edit by hand.`,
      'A diff in this file is a change of the public surface: review it as one.',
      '',
    ].join('\n')
    reports.set(entry.report, [header, ...sections, ...augmentations()].join('\n'))
  }
  const file = join(apiDir, 'report.api.md')
  const options = { ...(await prettier.resolveConfig(file)), filepath: file }
  for (const [name, text] of reports) reports.set(name, await prettier.format(text, options))
  return reports
}

/** Splits a report into its `## ` sections by heading name, keeping the heading line. */
function sectionsOf(text) {
  const sections = new Map()
  let current = '(header)'
  for (const line of text.split('\n')) {
    const heading = /^## `([^`]+)`/.exec(line)
    if (heading) current = heading[1]
    sections.set(current, [...(sections.get(current) ?? []), line])
  }
  return sections
}

/** A line diff (longest common subsequence): sections are short, so quadratic is fine. */
function lineDiff(before, after) {
  const lcs = Array.from({ length: before.length + 1 }, () => new Array(after.length + 1).fill(0))
  for (let i = before.length - 1; i >= 0; i--)
    for (let j = after.length - 1; j >= 0; j--)
      lcs[i][j] = before[i] === after[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1])
  const out = []
  let i = 0
  let j = 0
  while (i < before.length || j < after.length) {
    if (i < before.length && j < after.length && before[i] === after[j]) (i++, j++)
    else if (i < before.length && (j === after.length || lcs[i + 1][j] >= lcs[i][j + 1])) out.push(`- ${before[i++]}`)
    else out.push(`+ ${after[j++]}`)
  }
  return out
}

/** What changed in one report, symbol by symbol. */
function describeChange(committed, generated) {
  const before = sectionsOf(committed)
  const after = sectionsOf(generated)
  const lines = []
  for (const name of [...new Set([...before.keys(), ...after.keys()])].sort(byCodePoint)) {
    const old = before.get(name)
    const now = after.get(name)
    if (old?.join('\n') === now?.join('\n')) continue
    const what = old === undefined ? 'added' : now === undefined ? 'removed' : 'changed'
    lines.push(
      `  ${what}: ${name}`,
      ...lineDiff(old ?? [], now ?? [])
        .filter((l) => l.trim() !== '+' && l.trim() !== '-')
        .map((l) => `    ${l}`),
    )
  }
  return lines
}

/** The committed reports, by file name. */
export function readCommitted(dir = apiDir) {
  let files = []
  try {
    files = readdirSync(dir).filter((file) => file.endsWith('.api.md'))
  } catch {
    // No api/ yet: every entry point is then reported as missing.
  }
  return new Map(files.sort(byCodePoint).map((file) => [file, readFileSync(join(dir, file), 'utf8')]))
}

/**
 * What `--check` prints: nothing when the reports match, else each changed subpath and
 * symbol with a line diff, and how to update the report.
 */
export function compareReports(committed, generated) {
  const problems = []
  for (const file of [...new Set([...committed.keys(), ...generated.keys()])].sort(byCodePoint)) {
    const old = committed.get(file)
    const now = generated.get(file)
    if (old === now) continue
    if (old === undefined) problems.push(`api/${file}: missing (a new entry point)`)
    else if (now === undefined) problems.push(`api/${file}: no longer an entry point of exports`)
    else problems.push(`api/${file}: the public surface changed`, ...describeChange(old, now))
  }
  if (problems.length === 0) return ''
  return [
    'API report: the public surface differs from the committed report in api/.',
    ...problems,
    'If the change is intended, run `npm run api:report` and commit api/ with it.',
  ].join('\n')
}

function write(reports) {
  mkdirSync(apiDir, { recursive: true })
  for (const file of readdirSync(apiDir)) if (file.endsWith('.api.md') && !reports.has(file)) rmSync(join(apiDir, file))
  for (const [file, text] of reports) writeFileSync(join(apiDir, file), text)
  console.log(`API report: wrote ${reports.size} files in api/`)
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const reports = await generate()
  if (process.argv.includes('--check')) {
    const difference = compareReports(readCommitted(), reports)
    if (difference === '') console.log(`API report: ${reports.size} entry points match api/`)
    else {
      console.error(difference)
      process.exitCode = 1
    }
  } else write(reports)
}

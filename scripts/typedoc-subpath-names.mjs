// TypeDoc plugin: names each entry point's module after its package subpath
// (`voot-guard/express`) instead of its file path (`adapters/express`), using the map that
// typedoc.config.mjs derives from package.json `exports`.
import { relative } from 'node:path'
import { Converter, ReflectionKind } from 'typedoc'
import { subpaths } from '../typedoc.config.mjs'

const root = new URL('..', import.meta.url).pathname

/** @param {import('typedoc').Application} app */
export function load(app) {
  app.converter.on(Converter.EVENT_CREATE_DECLARATION, (context, reflection) => {
    if (!reflection.kindOf(ReflectionKind.Module)) return
    const file = context.getSymbolFromReflection(reflection)?.declarations?.[0]?.getSourceFile().fileName
    const name = file === undefined ? undefined : subpaths[`./${relative(root, file)}`]
    if (name !== undefined) reflection.name = name
  })
}

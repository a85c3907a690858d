/* global console */
/**
 * Builds the package that `npm pack` ships (run by `prepack`, and by `npm run build -w @svcpay/sdk`):
 *
 *   dist/esm/index.js   one ES module (esbuild bundle of src/), for `import`
 *   dist/cjs/index.js   the same as CommonJS, for `require` (dist/cjs/package.json says so)
 *   dist/{esm,cjs}/*.d.ts  declarations for each, from the TypeScript compiler
 *
 * The sources take their wire types from the server's TypeBox schemas (src/wire.ts), which a user's
 * project has neither the files nor the TypeBox for. So wire.d.ts is not emitted as written: every
 * type in it is written out in full, as the compiler resolves it, and the build fails if any of them
 * still names something outside the package. The result has no dependencies at all, and nothing in
 * it imports a `node:` module: it runs in Node 20+, browsers, Deno and Bun through Web APIs.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { basename, dirname, join, relative } from 'node:path'
import process from 'node:process'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import ts from 'typescript'

const PKG = join(dirname(fileURLToPath(import.meta.url)), '..')
const SRC = join(PKG, 'src')
const DIST = join(PKG, 'dist')
const ESM = join(DIST, 'esm')
const CJS = join(DIST, 'cjs')

rmSync(DIST, { recursive: true, force: true })
mkdirSync(ESM, { recursive: true })
mkdirSync(CJS, { recursive: true })

// JavaScript: one bundle per module format. No dependencies, so nothing is left external.
const common = {
  entryPoints: [join(SRC, 'index.ts')],
  bundle: true,
  platform: 'neutral',
  target: 'es2022',
  logLevel: 'warning',
  legalComments: 'none',
}
await build({ ...common, format: 'esm', outfile: join(ESM, 'index.js') })
await build({ ...common, format: 'cjs', outfile: join(CJS, 'index.js') })
writeFileSync(join(CJS, 'package.json'), JSON.stringify({ type: 'commonjs' }) + '\n')

// Declarations.
const sources = readdirSync(SRC)
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
  .map((f) => join(SRC, f))
const options = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
  strict: true,
  noUncheckedIndexedAccess: true,
  skipLibCheck: true,
  isolatedModules: true,
  types: [],
  declaration: true,
  emitDeclarationOnly: true,
  // The server's schema files come into the program through wire.ts's type-only imports.
  rootDir: join(PKG, '..', '..'),
  outDir: join(DIST, '.tsc'),
}
const program = ts.createProgram(sources, options)
const own = (file) => !relative(SRC, file).startsWith('..')
const problems = ts
  .getPreEmitDiagnostics(program)
  .filter((d) => d.category === ts.DiagnosticCategory.Error && (!d.file || own(d.file.fileName)))
if (problems.length) fail(ts.formatDiagnostics(problems, host()))

const declarations = new Map()
const emitted = program.emit(undefined, (fileName, text) => {
  const name = basename(fileName)
  if (fileName.includes(`${join('packages', 'sdk', 'src')}`) && name.endsWith('.d.ts')) {
    declarations.set(name, text.replace(/^\/\/# sourceMappingURL=.*$/m, ''))
  }
})
if (emitted.emitSkipped) fail('the TypeScript compiler emitted no declarations')
declarations.set('wire.d.ts', expandWireTypes())
for (const [name, text] of declarations) {
  if (/from ['"](?!\.\/)/.test(text) || /import\(["'](?!\.\/)/.test(text))
    fail(`${name} imports from outside the package:\n${text}`)
  writeFileSync(join(ESM, name), text)
  writeFileSync(join(CJS, name), text)
}
rmSync(join(DIST, '.tsc'), { recursive: true, force: true })

// Nothing Node-only on any path: the bundles must run in browsers, Deno and Bun too.
for (const dir of [ESM, CJS]) {
  const js = readFileSync(join(dir, 'index.js'), 'utf8')
  const nodeOnly = js.match(
    /(?:from\s*|import\(\s*|require\(\s*)["'](node:[^"']+|fs|path|crypto|buffer|http|https)["']/,
  )
  if (nodeOnly) fail(`${relative(PKG, dir)}/index.js imports ${nodeOnly[1]}`)
}
console.log(
  `@svcpay/sdk: built ${relative(process.cwd(), DIST) || 'dist'} (${declarations.size} declaration files)`,
)

/** wire.d.ts with each type alias written out in full, so that it needs nothing outside the package. */
function expandWireTypes() {
  const file = program.getSourceFile(join(SRC, 'wire.ts'))
  if (!file) fail('src/wire.ts is not in the program')
  const checker = program.getTypeChecker()
  const flags = ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.InTypeAlias
  let out = '// The server wire types, written out in full by scripts/build.mjs (see src/wire.ts).\n'
  for (const statement of file.statements) {
    if (!ts.isTypeAliasDeclaration(statement)) continue
    const name = statement.name.text
    const text = checker.typeToString(checker.getTypeAtLocation(statement.name), undefined, flags)
    if (/\bany\b|import\(|Static<|\bT[A-Z][A-Za-z]*</.test(text) || text.includes('...'))
      fail(`wire type ${name} did not resolve to plain types: ${text}`)
    out += `export type ${name} = ${text};\n`
  }
  return out
}

function host() {
  return {
    getCanonicalFileName: (f) => f,
    getCurrentDirectory: () => process.cwd(),
    getNewLine: () => '\n',
  }
}

function fail(message) {
  console.error(`@svcpay/sdk build: ${message}`)
  process.exit(1)
}

/**
 * `npm run build`: compiles src/ to plain JavaScript in dist/ with esbuild, for the production start
 * (`npm run start:prod`, `svcpay serve`). The benchmark compiles with this same function, into its
 * own directory (bench/lib/build.ts).
 *
 * File by file, no bundling: module paths, the `import.meta.url` look-ups of migrations and rate
 * files, and JSON imports all stay where the sources have them, and every other file of src/ (SQL,
 * HTML, data) is copied beside the code. dist/ resolves its packages from the repository's
 * node_modules, as src/ does.
 *
 * Why: tsx compiles the TypeScript on the fly in a loader thread that keeps a second copy of every
 * module it hands over; a compiled start has neither the thread nor the copies (some 75 MB of
 * resident memory, and a quicker start).
 */
import { cpSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

/** The repository root (scripts/ is one level down). */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')

export interface CompileOptions {
  /** The checkout whose src/ is compiled (this one by default). */
  root?: string
  /**
   * Link this node_modules beside the output, for an output directory outside the repository
   * (the benchmark's); dist/ inside the repository finds the repository's by itself.
   */
  linkNodeModules?: string
}

/** Compiles `<root>/src` into `<outDir>/src` and returns the server's entry point. */
export async function compileServer(outDir: string, opts: CompileOptions = {}): Promise<string> {
  const srcDir = join(opts.root ?? ROOT, 'src')
  const sources: string[] = []
  const assets: string[] = []
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (entry.name.endsWith('.test.ts') || entry.name.endsWith('.d.ts')) continue
      else if (entry.name.endsWith('.ts')) sources.push(path)
      else if (!entry.name.endsWith('.js')) assets.push(path)
    }
  }
  walk(srcDir)
  const outSrc = join(outDir, 'src')
  rmSync(outSrc, { recursive: true, force: true })
  for (const asset of assets) {
    const to = join(outSrc, relative(srcDir, asset))
    mkdirSync(dirname(to), { recursive: true })
    cpSync(asset, to)
  }
  await build({
    entryPoints: sources,
    outdir: outSrc,
    outbase: srcDir,
    format: 'esm',
    platform: 'node',
    // As written: the sources use nothing newer than Node 20 runs (tsx runs them unchanged too).
    target: 'esnext',
    bundle: false,
    sourcemap: 'linked',
    logLevel: 'warning',
  })
  writeFileSync(join(outDir, 'package.json'), JSON.stringify({ type: 'module', private: true }) + '\n')
  if (opts.linkNodeModules) symlinkSync(opts.linkNodeModules, join(outDir, 'node_modules'), 'dir')
  return join(outSrc, 'server.js')
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const started = Date.now()
  const entry = await compileServer(join(ROOT, 'dist'))
  console.log(
    `built ${relative(process.cwd(), entry)} in ${Date.now() - started} ms; start it with npm run start:prod`,
  )
}

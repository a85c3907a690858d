import { cpSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { build } from 'esbuild'
import { ROOT } from './proc.js'

/**
 * Compiles src/ (of `root`, this checkout by default: another checkout's for before-and-after
 * comparisons) to plain JavaScript, file by file (no bundling, so module paths, `import.meta.url`
 * lookups of migrations and rate files, and JSON imports all stay where the source has them), into
 * `<outDir>/src`, with the repository's node_modules linked beside it. Returns the entry point.
 *
 * Why: `npm start` runs the TypeScript through tsx, whose loader thread keeps a second copy of every
 * module it hands over and adds some 75 MB of resident memory before the first request; a
 * production image would run compiled JavaScript. The bench measures that by default and the tsx
 * runtime on request (`--runtime=tsx`, and one memory check in the full run).
 */
export async function compileServer(outDir: string, root = ROOT): Promise<string> {
  const srcDir = join(root, 'src')
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
  for (const asset of assets) {
    const to = join(outSrc, relative(srcDir, asset))
    mkdirSync(join(to, '..'), { recursive: true })
    cpSync(asset, to)
  }
  await build({
    entryPoints: sources,
    outdir: outSrc,
    outbase: srcDir,
    format: 'esm',
    platform: 'node',
    target: 'esnext',
    bundle: false,
    logLevel: 'warning',
  })
  writeFileSync(join(outDir, 'package.json'), JSON.stringify({ type: 'module', private: true }) + '\n')
  symlinkSync(join(ROOT, 'node_modules'), join(outDir, 'node_modules'), 'dir')
  return join(outSrc, 'server.js')
}

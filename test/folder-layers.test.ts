import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

/**
 * The folders of src/ stand on floors, and a folder imports only from floors below its own:
 * nothing sideways, nothing up. So no two folders depend on each other, directly or round a
 * longer loop, and a reader can learn the code from the bottom floor up. Unlike
 * test/import-cycles.test.ts (files, values only), this counts type imports too: a type shared
 * both ways ties two folders together as surely as a value does, and the fix is the same (the
 * shared type goes down a floor). docs/architecture.md draws the same table.
 *
 * The files directly in src/ (the process entry points, the container, the app) are the top floor.
 */
export const FLOORS: readonly (readonly string[])[] = [
  ['shared'],
  ['db'],
  ['config'],
  ['http'],
  ['auth'],
  ['ledger', 'rates'],
  ['accounts'],
  // Operator access stands above the accounts: its table of routes reads an account's tier
  // (through the accounts' own read) for the audit row of a tier change.
  ['operators'],
  ['events'],
  ['rails'],
  ['transactions'],
  ['fiat', 'bitcoin'],
  ['lightning', 'onchain', 'payouts', 'swap'],
  ['payins'],
  ['approvals', 'reconcile'],
  // Screening holds a send through the approval gate's review check (src/approvals/review.ts).
  ['screening'],
  // The limits (issue 31): a confirm gate beside the brake, and a review check of the approval gate.
  ['admin', 'limits'],
  ['sandbox', 'exports', 'pages'],
  // The OpenAPI document describes every route, so it reads the engine's and the webhooks' lists.
  ['openapi'],
  ['wiring'],
  ['console', 'cli'],
  ['.'],
]

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../src')

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name)
    if (e.isDirectory()) return e.name === 'migrations' ? [] : sourceFiles(path)
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [path] : []
  })
}

/** The folder of src/ a file belongs to ('.' for the files directly in src/). */
function folderOf(file: string): string {
  const parts = relative(SRC, file).split('/')
  return parts.length === 1 ? '.' : parts[0]!
}

/** Every relative module a file names in an import or export, type-only ones included. */
export function importedFiles(file: string, text: string): string[] {
  const specs = [
    ...text.matchAll(/^\s*(?:import|export)\b[^'";]*?\bfrom\s*'(\.[^']+)'/gms),
    ...text.matchAll(/^\s*import\s*'(\.[^']+)'/gm),
    ...text.matchAll(/\bimport\(\s*'(\.[^']+)'\s*\)/g),
  ].map((m) => m[1]!)
  return specs.map((spec) => resolve(dirname(file), spec.replace(/\.js$/, '.ts')))
}

const floorOf = new Map(FLOORS.flatMap((folders, floor) => folders.map((f) => [f, floor] as const)))

/** Every import between folders that does not go down a floor, as `from-file -> to-file`. */
function violations(): Array<{ from: string; to: string }> {
  const out: Array<{ from: string; to: string }> = []
  for (const file of sourceFiles(SRC)) {
    const from = folderOf(file)
    for (const target of importedFiles(file, readFileSync(file, 'utf8'))) {
      if (!target.startsWith(SRC + '/')) continue
      const to = folderOf(target)
      if (to === from) continue
      if (floorOf.get(to)! < floorOf.get(from)!) continue
      out.push({ from: relative(SRC, file), to: relative(SRC, target) })
    }
  }
  return out
}

describe('folder layers', () => {
  it('places every folder of src/ on exactly one floor', () => {
    const folders = readdirSync(SRC, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
    const placed = FLOORS.flat()
    expect(folders.filter((f) => !floorOf.has(f))).toEqual([])
    expect(placed.length).toBe(new Set(placed).size)
  })

  it('imports only from lower floors, type imports included', () => {
    // No exceptions: a type both sides need goes down to the floor below both.
    expect(violations().map((v) => `${v.from} -> ${v.to}`)).toEqual([])
  })

  it('reads type-only and re-exported imports, which the file-level cycle test skips', () => {
    const file = join(SRC, 'a', 'x.ts')
    const text = [
      "import type { T } from '../b/t.js'",
      "export { u } from '../c/u.js'",
      "import {\n  type V,\n} from '../d/v.js'",
      "type W = import('../e/w.js').W",
    ].join('\n')
    expect(importedFiles(file, text).map((p) => relative(SRC, p))).toEqual([
      'b/t.ts',
      'c/u.ts',
      'd/v.ts',
      'e/w.ts',
    ])
  })
})

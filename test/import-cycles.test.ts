import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

/**
 * No import cycle among the service's modules. A cycle makes the order in which modules are
 * evaluated decide whether a value is there yet (a constant read as undefined during start-up),
 * and it ties layers together that should depend one way. Type-only imports are erased when the
 * TypeScript is compiled, so they are left out; every other relative import counts.
 */

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../src')

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name)
    if (e.isDirectory()) return sourceFiles(path)
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [path] : []
  })
}

/** The modules a file imports values from: `import type` and `import { type a, type b }` are left out. */
export function valueImports(file: string, text: string): string[] {
  const out: string[] = []
  for (const m of text.matchAll(/^(?:import|export)\s+(type\s+)?([^'";]*?)\s*from\s*'(\.[^']+)'/gms)) {
    const [, typeOnly, clause, spec] = m as unknown as [string, string | undefined, string, string]
    if (typeOnly) continue
    const names = /^\{([^}]*)\}$/s.exec(clause.trim())?.[1]
    if (names !== undefined) {
      const listed = names
        .split(',')
        .map((n) => n.trim())
        .filter(Boolean)
      if (listed.length > 0 && listed.every((n) => n.startsWith('type '))) continue
    }
    out.push(resolve(dirname(file), spec.replace(/\.js$/, '.ts')))
  }
  return out
}

/** Strongly connected groups of more than one module (Tarjan), each a set of modules in a cycle. */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const found: string[][] = []
  const visit = (v: string): void => {
    index.set(v, next)
    low.set(v, next++)
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!))
    }
    if (low.get(v) !== index.get(v)) return
    const group: string[] = []
    for (let w = stack.pop()!; ; w = stack.pop()!) {
      onStack.delete(w)
      group.push(w)
      if (w === v) break
    }
    if (group.length > 1) found.push(group)
  }
  for (const v of graph.keys()) if (!index.has(v)) visit(v)
  return found
}

describe('module structure', () => {
  it('has no import cycle among the modules of src/', () => {
    const graph = new Map<string, string[]>()
    for (const file of sourceFiles(SRC)) graph.set(file, valueImports(file, readFileSync(file, 'utf8')))
    expect(graph.size).toBeGreaterThan(100)
    const found = cycles(graph).map((group) => group.map((f) => relative(SRC, f)).sort())
    expect(found).toEqual([])
  })

  it('keeps the engine (src/transactions) free of the flows and their rails', () => {
    // The engine reaches flows only through the Flow interface and the list the container builds.
    // Type-only imports count here too: a layer that names another's types depends on it.
    const flowFolders = ['lightning', 'onchain', 'payouts', 'bitcoin'].map((d) => join(SRC, d) + '/')
    const reaching = sourceFiles(join(SRC, 'transactions')).flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/from\s*'(\.[^']+)'/g)]
        .map((m) => resolve(dirname(file), m[1]!.replace(/\.js$/, '.ts')))
        .filter((target) => flowFolders.some((d) => target.startsWith(d)))
        .map((target) => `${relative(SRC, file)} -> ${relative(SRC, target)}`),
    )
    expect(reaching).toEqual([])
  })

  it('tells a value import from a type-only one, so that a cycle cannot hide behind the check', () => {
    const file = join(SRC, 'a/b.ts')
    const text = [
      "import type { A } from './types.js'",
      "import { type B, type C } from './more-types.js'",
      "import { type D, e } from './mixed.js'",
      "import { f } from '../values.js'",
      "export { g } from './re-export.js'",
    ].join('\n')
    expect(valueImports(file, text).map((f) => relative(SRC, f))).toEqual([
      'a/mixed.ts',
      'values.ts',
      'a/re-export.ts',
    ])
    // A cycle made on purpose is found.
    const a = join(SRC, 'x.ts')
    const b = join(SRC, 'y.ts')
    expect(
      cycles(
        new Map([
          [a, [b]],
          [b, [a]],
        ]),
      ).length,
    ).toBe(1)
  })
})

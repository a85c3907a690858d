/**
 * Where the embedded engine's memory goes: opens PGlite as src/db/db.ts does (a first start, which
 * runs initdb, or a later one on the same directory), then the migrations, and prints the process's
 * resident memory with V8's view of it (JS heap, external memory, ArrayBuffers) and the size of the
 * WebAssembly memory after each step and after a full garbage collection.
 *
 *   node --expose-gc --import tsx bench/pglite-memory.ts [DATA_DIR] [--defaults]
 *
 * `--defaults` opens PGlite with its own defaults instead of ours (createPgliteDb), to compare.
 * docs/memory.md records what it showed.
 */
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { createPgliteDb } from '../src/db/db.js'
import { migrate } from '../src/db/migrate.js'

const args = process.argv.slice(2)
const defaults = args.includes('--defaults')
const dataDir = args.find((a) => !a.startsWith('--')) ?? mkdtempSync(join(tmpdir(), 'svcpay-pglite-mem-'))
const gc = (globalThis as { gc?: () => void }).gc
const mb = (n: number) => Math.round(n / 2 ** 20)

function rssMb(): number {
  const m = /VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))
  return m ? Math.round(Number(m[1]) / 1024) : 0
}

let wasmBytes = () => 0
function report(step: string): void {
  const wasm = wasmBytes() ? ` | wasm memory ${String(mb(wasmBytes())).padStart(4)} MB` : ''
  const m = process.memoryUsage()
  console.log(
    `${step.padEnd(34)} rss ${String(rssMb()).padStart(4)} MB | heap ${String(mb(m.heapUsed)).padStart(3)} | ` +
      `external ${String(mb(m.external)).padStart(4)} (ArrayBuffers ${String(mb(m.arrayBuffers)).padStart(4)})${wasm}`,
  )
}
function collect(step: string): void {
  if (!gc) return
  gc()
  report(`${step}, after gc`)
}

report('node, modules loaded')
if (defaults) {
  const lite = new PGlite(dataDir)
  await lite.waitReady
  wasmBytes = () =>
    (lite as unknown as { mod?: { wasmMemory?: WebAssembly.Memory } }).mod?.wasmMemory?.buffer.byteLength ?? 0
  report('PGlite ready (its defaults)')
  collect('PGlite ready')
  const settings = await lite.query<{ name: string; setting: string; unit: string | null }>(
    `SELECT name, setting, unit FROM pg_settings WHERE name IN ('shared_buffers','work_mem','maintenance_work_mem','wal_buffers','temp_buffers','max_wal_size','min_wal_size','max_connections')`,
  )
  console.log(settings.rows.map((r) => `${r.name}=${r.setting}${r.unit ? ' x ' + r.unit : ''}`).join(' '))
  await lite.close()
} else {
  const db = await createPgliteDb(dataDir)
  report('PGlite ready (createPgliteDb)')
  collect('PGlite ready')
  await migrate(db)
  report('migrations applied')
  collect('migrations applied')
  const settings = await db.query<{ name: string; setting: string; unit: string | null }>(
    `SELECT name, setting, unit FROM pg_settings WHERE name IN ('shared_buffers','work_mem','maintenance_work_mem','wal_buffers','temp_buffers','max_wal_size','min_wal_size','max_connections')`,
  )
  console.log(settings.rows.map((r) => `${r.name}=${r.setting}${r.unit ? ' x ' + r.unit : ''}`).join(' '))
  await db.close()
}
console.log(`data directory: ${dataDir}`)

import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { LatencyMs, LoadResult } from './load-spec.js'
import type { WritesPerOp } from './writes.js'

/** One line of the results: a scenario or a ceiling. */
export interface ScenarioResult {
  id: string
  title: string
  status: 'ok' | 'skipped' | 'pending' | 'failed'
  /** Why it was skipped, pending or failed, or a remark on how it was run. */
  note?: string
  /** What `throughput` counts, e.g. `req/s`, `swaps/s`, `tps`. */
  unit?: string
  throughput?: number
  latencyMs?: LatencyMs
  errors?: number
  peakRssMb?: number
  /** The server's resident memory after start-up, idle, before this scenario's load. */
  idleRssMb?: number
  /** The server's CPU time per request (or per operation), a figure that busy neighbours hardly move. */
  serverCpuMsPerOp?: number
  /** PostgreSQL's CPU time (all its processes) per request or operation. */
  dbCpuMsPerOp?: number
  /** The CPU time of the bench database's own backends per request or operation (pg_stat_activity). */
  dbBackendCpuMsPerOp?: number
  /** dbBackendCpuMsPerOp / pgbench's own backends' CPU per transaction in the same run. */
  dbBackendCpuNorm?: number
  /** The load client's own CPU time per HTTP request, measured in the same run (the control). */
  clientCpuMsPerRequest?: number
  /** serverCpuMsPerOp / clientCpuMsPerRequest. */
  serverCpuNorm?: number
  /** dbCpuMsPerOp / pgbench's database CPU per transaction in the same run (ceiling-pgbench). */
  dbCpuNorm?: number
  /** Rows, index entries, WAL and commits per operation (the swap scenarios on PostgreSQL). */
  writes?: WritesPerOp
  /** The machine's 1-minute load average as the measurement began. */
  loadAverage?: number
  /** What this result is held against; `ratio` is throughput / ceiling unless `ratioText` says otherwise. */
  ceiling?: { id: string; value: number; unit: string }
  ratio?: number
  ratioText?: string
  target?: { text: string; met: boolean }
  load?: LoadResult
  details?: Record<string, unknown>
}

const fmt = (n: number | undefined, digits = 1) =>
  n === undefined ? '' : n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(digits)

const HEADER =
  '| Scenario | Throughput | p50 ms | p99 ms | max ms | Errors | Idle RSS MB | Peak RSS MB | Server CPU ms/op | DB CPU ms/op | DB backends CPU ms/op | Client CPU ms/req | Server CPU norm | DB CPU norm | DB backends norm | Load avg | Ceiling | Ratio | Target |\n' +
  '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---|'

export function tableRow(r: ScenarioResult): string {
  if (r.status !== 'ok') {
    return `| ${r.title} | **${r.status}** | | | | | | | | | | | | | | | | | ${r.note ?? ''} |`
  }
  const l = r.latencyMs
  const ceiling = r.ceiling ? `${r.ceiling.id} ${fmt(r.ceiling.value)} ${r.ceiling.unit}` : ''
  const ratio = r.ratio === undefined ? '' : (r.ratioText ?? r.ratio.toFixed(2))
  const target = r.target ? `${r.target.met ? 'met' : '**missed**'}: ${r.target.text}` : ''
  const cpu = r.serverCpuMsPerOp === undefined ? '' : r.serverCpuMsPerOp.toFixed(3)
  const dbCpu = r.dbCpuMsPerOp === undefined ? '' : r.dbCpuMsPerOp.toFixed(3)
  const load = r.loadAverage === undefined ? '' : r.loadAverage.toFixed(1)
  const fixed = (n: number | undefined, digits: number) => (n === undefined ? '' : n.toFixed(digits))
  return (
    `| ${r.title} | ${fmt(r.throughput)} ${r.unit ?? ''} | ${fmt(l?.p50, 2)} | ${fmt(l?.p99, 2)} | ${fmt(l?.max, 2)} | ` +
    `${r.errors ?? ''} | ${fmt(r.idleRssMb)} | ${fmt(r.peakRssMb)} | ${cpu} | ${dbCpu} | ${fixed(r.dbBackendCpuMsPerOp, 3)} | ` +
    `${fixed(r.clientCpuMsPerRequest, 4)} | ${fixed(r.serverCpuNorm, 2)} | ${fixed(r.dbCpuNorm, 2)} | ${fixed(r.dbBackendCpuNorm, 2)} | ` +
    `${load} | ${ceiling} | ${ratio} | ${target} |`
  )
}

export function table(results: ScenarioResult[]): string {
  return [HEADER, ...results.map(tableRow)].join('\n')
}

/** What each operation wrote, one row per scenario that counted it (bench/lib/writes.ts). */
export function writesTable(results: ScenarioResult[]): string {
  const rows = results.filter((r) => r.status === 'ok' && r.writes)
  if (!rows.length) return ''
  const f = (n: number | undefined, digits = 2) => (n === undefined ? 'n/a' : n.toFixed(digits))
  const i = (n: number | undefined) => (n === undefined ? 'n/a' : Math.round(n).toLocaleString('en-US'))
  const lines = [
    'Rows and index entries from the WAL (pg_walinspect) where it could be read, and from the statistics views beside them:',
    '',
    '| Scenario | Ops | Rows ins | upd (non-HOT) | HOT upd | Row locks | Index entries | WAL records | WAL bytes | FPI bytes | Write commits | Commits (all) | Notify calls | Stats: ins / upd / HOT | Stats: index entries est. | Server WAL records | Server WAL bytes | Server LSN bytes |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|',
    ...rows.map((r) => {
      const w = r.writes!
      return (
        `| ${r.title} | ${i(w.ops)} | ${f(w.wal?.heapInserts)} | ${f(w.wal?.heapUpdates)} | ${f(w.wal?.heapHotUpdates)} | ` +
        `${f(w.wal?.rowLocks)} | ${f(w.wal?.indexEntries)} | ${f(w.wal?.records)} | ${i(w.wal?.bytes)} | ${i(w.wal?.fpiBytes)} | ` +
        `${f(w.wal?.writeCommits)} | ${f(w.commits)} | ${f(w.notifyCalls)} | ` +
        `${f(w.rowsInserted)} / ${f(w.rowsUpdated)} / ${f(w.rowsHotUpdated)} | ${f(w.indexEntriesEstimated)} | ` +
        `${f(w.serverWalRecords)} | ${i(w.serverWalBytes)} | ${i(w.serverLsnBytes)} |`
      )
    }),
  ]
  for (const r of rows) {
    const w = r.writes!
    lines.push(
      '',
      `${r.title}, per operation by table (WAL: its heap, TOAST and index records together):`,
      '',
      '| Table | Indexes | Rows ins | upd (non-HOT) | HOT upd | Index entries | WAL records | WAL bytes | Stats: ins / upd / HOT | Stats: index entries est. |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---|---:|',
      ...w.byTable.map(
        (t) =>
          `| ${t.table} | ${t.indexes}${t.partialIndexes ? ` (${t.partialIndexes} partial)` : ''} | ${f(t.walIns)} | ` +
          `${f(t.walUpd)} | ${f(t.walHotUpd)} | ${f(t.walIndexEntries)} | ${f(t.walRecords)} | ${i(t.walBytes)} | ` +
          `${f(t.ins)} / ${f(t.upd)} / ${f(t.hotUpd)} | ${f(t.indexEntriesEstimated)} |`,
      ),
    )
  }
  lines.push(
    '',
    `WAL: ${rows[0]!.writes!.walSource}. Notify calls: ${rows[0]!.writes!.notifySource}. Commits: ` +
      "pg_stat_database's xact_commit of the bench database, every statement outside a transaction block " +
      "included (reads, and the notifier's commits); write commits: the COMMIT records of the transactions " +
      'that wrote it. Server WAL: pg_stat_wal (flushed with a lag of up to a second) and the LSN difference, ' +
      'of the whole PostgreSQL server, other databases included.',
  )
  return lines.join('\n')
}

/** Writes `<id>.json` and `<id>.md` for one scenario. */
export function writeScenario(dir: string, r: ScenarioResult): void {
  writeFileSync(join(dir, `${r.id}.json`), JSON.stringify(r, null, 2) + '\n')
  const notes = r.note ? `\n${r.note}\n` : ''
  writeFileSync(join(dir, `${r.id}.md`), `### ${r.title}\n\n${table([r])}\n${notes}`)
}

/** The one-screen summary printed at the end and written as Markdown. */
export function summaryMarkdown(input: {
  mode: 'quick' | 'full'
  startedAt: Date
  elapsedS: number
  machine: Record<string, string>
  settings: Record<string, unknown>
  results: ScenarioResult[]
  limiter?: ScenarioResult[]
  targets?: Array<{ text: string; met: boolean }>
}): string {
  const lines = [
    `# svcpay bench (${input.mode} run)`,
    '',
    `Run ${input.startedAt.toISOString()}, ${Math.round(input.elapsedS)} s in all.`,
    '',
    Object.entries(input.machine)
      .map(([k, v]) => `- ${k}: ${v}`)
      .join('\n'),
    `- settings: ${Object.entries(input.settings)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')}`,
    '',
    '## Scenarios',
    '',
    'Throughput is per HTTP request, or per operation (a swap is its create and confirm); latency likewise. ' +
      "Server CPU is the svcpay process's user + system time per request or operation, the figure that other " +
      "load on the machine moves least; load avg is the machine's 1-minute load average as the measurement began.",
    '',
    table(input.results),
    '',
    'Normalised figures (bench/README.md, "Judging a change"): server CPU norm is the server\'s CPU per operation ' +
      "divided by the load client's own CPU per HTTP request in the same run; DB CPU norm is PostgreSQL's CPU per " +
      "operation divided by its CPU per pgbench transaction in the same run's ceiling-pgbench; DB backends counts only " +
      'the backends connected to the database under load (pg_stat_activity), and its norm divides by the same figure of pgbench.',
    '',
  ]
  const writes = writesTable(input.results)
  if (writes) lines.push('## Writes per operation', '', writes, '')
  if (input.limiter?.length) {
    lines.push('## limiter-overhead', '', limiterTable(input.limiter), '')
  }
  if (input.targets?.length) {
    lines.push(
      '## Targets',
      '',
      ...input.targets.map((t) => `- ${t.met ? 'met' : '**missed**'}: ${t.text}`),
      '',
    )
  }
  const notes = input.results.filter((r) => r.note).map((r) => `- **${r.title}**: ${r.note}`)
  if (notes.length) lines.push('## Notes', '', ...notes, '')
  return lines.join('\n')
}

export function limiterTable(rows: ScenarioResult[]): string {
  return [
    '| Limits | req/s | p50 ms | p99 ms | Errors | vs off |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.title} | ${fmt(r.throughput)} | ${fmt(r.latencyMs?.p50, 2)} | ${fmt(r.latencyMs?.p99, 2)} | ${r.errors ?? ''} | ${r.ratio === undefined ? '' : r.ratio.toFixed(2)} |`,
    ),
  ].join('\n')
}

import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { LatencyMs, LoadResult } from './load-spec.js'

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
  '| Scenario | Throughput | p50 ms | p99 ms | max ms | Errors | Idle RSS MB | Peak RSS MB | Server CPU ms/op | DB CPU ms/op | Load avg | Ceiling | Ratio | Target |\n' +
  '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---|'

export function tableRow(r: ScenarioResult): string {
  if (r.status !== 'ok') {
    return `| ${r.title} | **${r.status}** | | | | | | | | | | | | ${r.note ?? ''} |`
  }
  const l = r.latencyMs
  const ceiling = r.ceiling ? `${r.ceiling.id} ${fmt(r.ceiling.value)} ${r.ceiling.unit}` : ''
  const ratio = r.ratio === undefined ? '' : (r.ratioText ?? r.ratio.toFixed(2))
  const target = r.target ? `${r.target.met ? 'met' : '**missed**'}: ${r.target.text}` : ''
  const cpu = r.serverCpuMsPerOp === undefined ? '' : r.serverCpuMsPerOp.toFixed(3)
  const dbCpu = r.dbCpuMsPerOp === undefined ? '' : r.dbCpuMsPerOp.toFixed(3)
  const load = r.loadAverage === undefined ? '' : r.loadAverage.toFixed(1)
  return (
    `| ${r.title} | ${fmt(r.throughput)} ${r.unit ?? ''} | ${fmt(l?.p50, 2)} | ${fmt(l?.p99, 2)} | ${fmt(l?.max, 2)} | ` +
    `${r.errors ?? ''} | ${fmt(r.idleRssMb)} | ${fmt(r.peakRssMb)} | ${cpu} | ${dbCpu} | ${load} | ${ceiling} | ${ratio} | ${target} |`
  )
}

export function table(results: ScenarioResult[]): string {
  return [HEADER, ...results.map(tableRow)].join('\n')
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
  ]
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

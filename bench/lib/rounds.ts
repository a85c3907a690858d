import type { ScenarioResult } from './report.js'
import { compare, spreadOf, type Comparison, type Spread } from './stats.js'

/** The figures of a scenario that rounds are compared on, by name (undefined where it has none). */
export function figuresOf(r: ScenarioResult): Array<[string, number | undefined]> {
  const w = r.writes
  return [
    [`throughput ${r.unit ?? ''}`.trim(), r.throughput],
    ['p99 ms', r.latencyMs?.p99],
    ['server CPU ms/op', r.serverCpuMsPerOp],
    ['client CPU ms/req', r.clientCpuMsPerRequest],
    ['server CPU norm', r.serverCpuNorm],
    ['DB CPU ms/op', r.dbCpuMsPerOp],
    ['DB CPU norm', r.dbCpuNorm],
    ['DB backends CPU ms/op', r.dbBackendCpuMsPerOp],
    ['DB backends norm', r.dbBackendCpuNorm],
    ['peak RSS MB', r.peakRssMb],
    ['rows inserted/op (WAL)', w?.wal?.heapInserts],
    ['rows updated non-HOT/op (WAL)', w?.wal?.heapUpdates],
    ['rows HOT-updated/op (WAL)', w?.wal?.heapHotUpdates],
    ['index entries/op (WAL)', w?.wal?.indexEntries],
    ['rows inserted/op (stats)', w?.rowsInserted],
    ['rows updated/op (stats)', w?.rowsUpdated],
    ['index entries/op (stats est.)', w?.indexEntriesEstimated],
    ['WAL records/op', w?.wal?.records],
    ['WAL bytes/op', w?.wal?.bytes],
    ['commits/op', w?.commits],
    ['write commits/op', w?.wal?.writeCommits],
  ]
}

export interface RoundsRow {
  scenario: string
  title: string
  figure: string
  /** compare: the `before` passes' values, round by round; repeat: every round's. */
  before: Array<number | undefined>
  after: Array<number | undefined>
  spread?: Spread
  comparison?: Comparison
}

/**
 * One row per scenario and figure over the passes of a run: `compare` pairs each round's before
 * with its after; `repeat` (the same code every round) reports the spread alone.
 */
export function roundsRows(
  passes: Array<{ side: 'before' | 'after' | 'only'; round: number; results: ScenarioResult[] }>,
  mode: 'compare' | 'repeat',
): RoundsRow[] {
  const rounds = Math.max(...passes.map((p) => p.round))
  const ids: string[] = []
  const titles = new Map<string, string>()
  for (const p of passes)
    for (const r of p.results)
      if (r.status === 'ok' && !titles.has(r.id)) {
        ids.push(r.id)
        titles.set(r.id, r.title)
      }
  const valuesOf = (side: 'before' | 'after' | 'only', id: string, figure: string) =>
    Array.from({ length: rounds }, (_, i) => {
      const pass = passes.find((p) => p.side === side && p.round === i + 1)
      const r = pass?.results.find((x) => x.id === id && x.status === 'ok')
      return r ? figuresOf(r).find(([name]) => name === figure)?.[1] : undefined
    })
  const rows: RoundsRow[] = []
  for (const id of ids) {
    const sample = passes.flatMap((p) => p.results).find((r) => r.id === id && r.status === 'ok')!
    for (const [figure] of figuresOf(sample)) {
      if (mode === 'repeat') {
        const before = valuesOf('only', id, figure)
        const spread = spreadOf(before)
        if (spread) rows.push({ scenario: id, title: titles.get(id)!, figure, before, after: [], spread })
      } else {
        const before = valuesOf('before', id, figure)
        const after = valuesOf('after', id, figure)
        const comparison = compare(before, after)
        if (comparison) rows.push({ scenario: id, title: titles.get(id)!, figure, before, after, comparison })
      }
    }
  }
  return rows
}

const num = (n: number | undefined) =>
  n === undefined
    ? '–'
    : Math.abs(n) >= 100
      ? Math.round(n).toLocaleString('en-US')
      : Math.abs(n) >= 1
        ? n.toFixed(2)
        : n.toFixed(4)
const range = (s: Spread) => `${num(s.min)}–${num(s.max)}`

/** The rows as a Markdown table. */
export function roundsTable(rows: RoundsRow[], mode: 'compare' | 'repeat'): string {
  if (mode === 'repeat') {
    return [
      '| Scenario | Figure | Rounds | Mean | Min–max | Spread |',
      '|---|---|---|---:|---|---:|',
      ...rows.map(
        (r) =>
          `| ${r.scenario} | ${r.figure} | ${r.before.map(num).join(', ')} | ${num(r.spread!.mean)} | ${range(r.spread!)} | ` +
          `±${((r.spread!.relSpread / 2) * 100).toFixed(1)}% |`,
      ),
    ].join('\n')
  }
  return [
    '| Scenario | Figure | Before, by round | Mean | Min–max | After, by round | Mean | Min–max | After/before | Pairs min–max | Outside the spread |',
    '|---|---|---|---:|---|---|---:|---|---:|---|---|',
    ...rows.map((r) => {
      const c = r.comparison!
      return (
        `| ${r.scenario} | ${r.figure} | ${r.before.map(num).join(', ')} | ${num(c.before.mean)} | ${range(c.before)} | ` +
        `${r.after.map(num).join(', ')} | ${num(c.after.mean)} | ${range(c.after)} | ${c.ratio.toFixed(3)} | ` +
        `${c.ratioMin.toFixed(3)}–${c.ratioMax.toFixed(3)} | ${c.outsideSpread ? 'yes' : 'no'} |`
      )
    }),
  ].join('\n')
}

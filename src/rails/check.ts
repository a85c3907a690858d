/**
 * `svcpay rails check` and `GET /admin/rails`: ask every configured rail how it is (its optional
 * `check()`, RailCheckReport in rail.ts), each within a time limit and all at once, and say whether
 * the service is ready for real money. A check never moves money.
 *
 * Verdicts per rail:
 * - `ok`: the rail's check found no problem;
 * - `problem`: it found one or more, did not answer in time, or failed;
 * - `not_checked`: its adapter has no check() yet: a problem for a real rail, since nothing tells
 *   the operator it works;
 * - `sandbox`: a sandbox rail, which moves no real money and needs no node.
 */
import type { CheckableRail, RailCheckReport, RailKind } from './rail.js'
import { RAIL_KINDS } from '../config/rail-ops.js'

export type RailVerdict = 'ok' | 'problem' | 'not_checked' | 'sandbox'

export interface RailCheckEntry {
  rail: RailKind
  adapter: string
  verdict: RailVerdict
  /** Milliseconds the check took (or waited, when it timed out). */
  durationMs: number
  /** The rail's own report; absent when it has no check() or did not answer. */
  report?: RailCheckReport
  /** Every problem, the report's own first; empty when the verdict is `ok` or `sandbox`. */
  problems: string[]
}

export interface RailsCheckResult {
  /** True when no rail has a problem: every one is `ok` or `sandbox`. */
  ok: boolean
  checkedAt: number
  rails: RailCheckEntry[]
}

export interface ConfiguredRail {
  rail: RailKind
  /** The configured adapter: `sandbox`, `lnd`, `bitcoind`, `esplora`, `trongrid`, `bank-http`. */
  adapter: string
  impl: CheckableRail
}

/** A failure's text may come from a node or partner: kept to one short line. */
function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim()
  return line.length > 300 ? `${line.slice(0, 297)}...` : line
}

async function checkOne(configured: ConfiguredRail, timeoutMs: number): Promise<RailCheckEntry> {
  const { rail, adapter, impl } = configured
  const started = Date.now()
  const entry = (verdict: RailVerdict, problems: string[], report?: RailCheckReport): RailCheckEntry => ({
    rail,
    adapter,
    verdict,
    durationMs: Date.now() - started,
    ...(report ? { report } : {}),
    problems,
  })
  if (typeof impl.check !== 'function') {
    if (adapter === 'sandbox') return entry('sandbox', [])
    return entry('not_checked', [`the ${adapter} adapter cannot be checked yet (it has no check())`])
  }
  let timer: NodeJS.Timeout | undefined
  try {
    const report = await Promise.race([
      impl.check(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new CheckTimeout()), timeoutMs)
      }),
    ])
    if (adapter === 'sandbox' && report.problems.length === 0) return entry('sandbox', [], report)
    if (!report.reachable && report.problems.length === 0)
      return entry('problem', [`the ${adapter} rail is not reachable`], report)
    return entry(report.problems.length ? 'problem' : 'ok', [...report.problems], report)
  } catch (err) {
    if (err instanceof CheckTimeout) return entry('problem', [`no answer within ${timeoutMs} ms`])
    return entry('problem', [`the check failed: ${oneLine((err as Error).message ?? String(err))}`])
  } finally {
    clearTimeout(timer)
  }
}

class CheckTimeout extends Error {}

/** Check every configured rail at once, in the order lightning, onchain, tron, bank. */
export async function checkRails(rails: ConfiguredRail[], timeoutMs: number): Promise<RailsCheckResult> {
  const ordered = [...rails].sort((a, b) => RAIL_KINDS.indexOf(a.rail) - RAIL_KINDS.indexOf(b.rail))
  const entries = await Promise.all(ordered.map((rail) => checkOne(rail, timeoutMs)))
  return {
    ok: entries.every((e) => e.verdict === 'ok' || e.verdict === 'sandbox'),
    checkedAt: Date.now(),
    rails: entries,
  }
}

/** The readable table `svcpay rails check` prints: one line per rail, then each problem. */
export function formatRailsCheck(result: RailsCheckResult): string {
  const header = ['RAIL', 'ADAPTER', 'VERDICT', 'VERSION', 'NETWORK', 'SYNCED', 'BALANCES']
  const rows = result.rails.map((e) => {
    const r = e.report
    const balances = r?.balances
      ? Object.entries(r.balances)
          .map(([ccy, amount]) => `${amount} ${ccy}`)
          .join(', ')
      : ''
    return [
      e.rail,
      e.adapter,
      e.verdict.replace('_', ' '),
      r?.version ?? '-',
      r?.network ?? '-',
      r?.synced === undefined ? '-' : r.synced ? 'yes' : 'no',
      balances || '-',
    ]
  })
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)))
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join('  ')
      .trimEnd()
  const out = [line(header), ...rows.map(line)]
  const problems = result.rails.flatMap((e) => e.problems.map((p) => `  ${e.rail}: ${p}`))
  if (problems.length) out.push('', 'Problems:', ...problems)
  out.push('', result.ok ? 'All rails ready.' : 'NOT READY: fix the problems above before going live.')
  return out.join('\n')
}

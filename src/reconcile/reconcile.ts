/**
 * Reconciliation (issue 18): the books held against the money on every rail. For each rail and its
 * currency it sets side by side
 * - `ledger`: what the ledger says the rail holds, the negated sum of the postings of its system
 *   account (`sys:lightning:BTC`, ...): money that came in through the rail, less what left by it;
 * - `outgoing`: sends held in wallets but not yet posted, which the rail may already have paid
 *   (a Lightning payment in flight, an on-chain send awaiting its confirmation, a payout in destsent);
 * - `reported`: what the rail itself says it holds (its reserves(), or the balance its check()
 *   reports), and `incoming`, the part of that which has arrived but is not final;
 * - `delta` = (reported - incoming) - (ledger - outgoing): zero when they agree, negative when the
 *   rail holds less than the books say (a deficit), positive when it holds more (a surplus).
 * A rail that does not answer, fails or cannot say gives `unknown`: never a zero balance.
 * Beside them, per currency: customer liabilities (every wallet's balance) and the assets the rails
 * report, so the operator sees whether every customer could be paid.
 */
import type { Queryable } from '../db/db.js'
import type { CheckableRail, PaymentsRail, RailKind, RailReserves, ReservesRail } from '../rails/rail.js'
import { formatMinor, formatScaled, parseAmount } from '../shared/amount.js'
import { capitalByRail } from './capital.js'
import { systemAccountId, type SystemPurpose } from '../ledger/ledger.js'
import { postingSums, walletTotalsByCurrency } from '../ledger/reads.js'
import { railAccountEntries, refsWithEntries } from '../ledger/rail-entries.js'
import { inFlightSendTotals } from '../transactions/reads-reports.js'
import { amountMismatches } from './amount-match.js'
import { CREDIT_STATEMENT_GRACE_MS, entryRef, type RailCurrencies } from './refs.js'

export interface ReconcilableRail {
  rail: RailKind
  adapter: string
  impl: ReservesRail & CheckableRail & PaymentsRail
}

export type RailStatus = 'ok' | 'deficit' | 'surplus' | 'unknown'

export interface RailReconciliation {
  rail: RailKind
  ccy: string
  adapter: string
  status: RailStatus
  /** Exact decimal text; `reported`, `incoming` and `delta` are null when the rail could not say. */
  ledger: string
  outgoing: string
  reported: string | null
  incoming: string | null
  delta: string | null
  /** Where the reported figure came from: the rail's reserves(), or the balance of its check(). */
  source?: 'reserves' | 'check'
  /**
   * Net operator capital booked on this rail (POST /admin/capital): part of `ledger`, money of the
   * operator's own rather than the customers'.
   */
  capital?: string
  /** What else the rail reported holding, as information (the TRON hot wallet's TRX for fees). */
  otherBalances?: Record<string, string>
  /** Why the figure is unknown, or what it leaves out. */
  note?: string
}

export interface CurrencyPosition {
  ccy: string
  /** The sum of every customer wallet's balance: what the service owes. */
  liabilities: string
  /** The sum of what the rails of this currency report; null when one of them is unknown. */
  assets: string | null
  /** assets - liabilities; negative means not every customer could be paid out. */
  coverage: string | null
}

export interface ReconciliationReport {
  /** False when a rail shows a deficit or an orphan was found. Unknown rails do not make it false. */
  ok: boolean
  /** True when some rail could not be read: the report is incomplete. */
  incomplete: boolean
  checkedAt: number
  rails: RailReconciliation[]
  currencies: CurrencyPosition[]
  /** Payments the rail and the ledger do not both know, over the matching window (item matching). */
  orphans: Orphan[]
  /** Rails whose payments could not be matched (no payments() yet, or no answer), with why. */
  unmatched: Array<{ rail: RailKind; note: string }>
  /** Rails whose sends the brake has paused (RECONCILE_HALT_SENDS), after this run. */
  pausedRails?: RailKind[]
}

interface Internal {
  entry: RailReconciliation
  reportedMinor: bigint | null
}

class ReadTimeout extends Error {}

/** Decimals of what a rail may report beside its own currency, as information (TRX: sun). */
const OTHER_SCALE: Record<string, number> = { TRX: 6 }

/** How far back item matching looks by default: 7 days. */
export const MATCH_WINDOW_MS = 7 * 86_400_000

export interface Orphan {
  rail: RailKind
  /**
   * `rail`: money the rail moved that no transaction explains; `ledger`: an entry whose money the
   * rail never moved; `both`: a payment both know, for different amounts (`amount_mismatch`).
   */
  side: 'rail' | 'ledger' | 'both'
  reason:
    | 'not_in_ledger'
    | 'not_on_rail'
    | 'entry_without_transaction'
    | 'amount_mismatch'
    /** A bank transfer in suspense, on the statement, that no operator has assigned yet. */
    | 'unassigned_credit'
    /** A bank transfer credited (from a signed notification) that the partner's statement never lists. */
    | 'credit_not_on_statement'
  ref: string | null
  txnId: string | null
  ccy: string
  /** Exact decimal text: what the rail moved, or what the ledger posted on the rail's account. */
  amount: string
  /** With `amount_mismatch`: what the rail says moved, and what the ledger posted, signed alike. */
  railAmount?: string
  ledgerAmount?: string
  at: number
}

/** Match every payment the rail knows since `sinceMs` with the ledger's entries on its account, both ways. */
async function matchItems(
  q: Queryable,
  configured: ReconcilableRail,
  ccy: string,
  sinceMs: number,
  timeoutMs: number,
  now: number,
): Promise<Orphan[] | { unknown: string }> {
  const { impl, rail } = configured
  if (typeof impl.payments !== 'function')
    return { unknown: `the ${configured.adapter} adapter cannot list its payments yet` }
  let payments
  try {
    payments = await withTimeout(impl.payments(sinceMs), timeoutMs)
  } catch (err) {
    if (err instanceof ReadTimeout) return { unknown: `no answer within ${timeoutMs} ms` }
    return { unknown: `the rail failed: ${((err as Error).message ?? String(err)).slice(0, 300)}` }
  }
  const account = systemAccountId(rail as SystemPurpose, ccy)
  const ref = entryRef(rail)
  const orphans: Orphan[] = []
  // Ledger side: every entry on the rail's account in the window, with its reference (a suspense
  // entry's is its bank credit's), and whether that reference is a bank transfer in.
  const entries = await railAccountEntries(q, { account, sinceMs, ref })
  const onRail = new Set(payments.map((p) => p.ref))
  // A payment settled inside the service (an account paying another's invoice) posts on the rail's
  // account twice, once each way, under one reference: it nets to zero and the rail never sees it.
  const netByRef = new Map<string, bigint>()
  for (const e of entries)
    if (e.rail_ref) netByRef.set(e.rail_ref, (netByRef.get(e.rail_ref) ?? 0n) + BigInt(e.total as bigint))
  for (const e of entries) {
    const amount = formatMinor(-BigInt(e.total as bigint), ccy)
    const at = Number(e.at)
    const missing = !e.rail_ref || (!onRail.has(e.rail_ref) && netByRef.get(e.rail_ref) !== 0n)
    if (e.suspense !== null || (e.is_credit && e.txn_id !== null && missing)) {
      // A bank transfer in: the partner's statement is the rail's truth for it. Missing from it past
      // the grace window, it is money the books credited on a notification alone; listed, a
      // transfer still in suspense waits for an operator.
      const reason =
        missing && now - at >= CREDIT_STATEMENT_GRACE_MS
          ? 'credit_not_on_statement'
          : !missing && e.suspense === 'unassigned'
            ? 'unassigned_credit'
            : null
      if (reason)
        orphans.push({ rail, side: 'ledger', reason, ref: e.rail_ref, txnId: e.txn_id, ccy, amount, at })
    } else if (e.txn_id === null) {
      orphans.push({
        rail,
        side: 'ledger',
        reason: 'entry_without_transaction',
        ref: null,
        txnId: null,
        ccy,
        amount,
        at,
      })
    } else if (missing) {
      orphans.push({
        rail,
        side: 'ledger',
        reason: 'not_on_rail',
        ref: e.rail_ref,
        txnId: e.txn_id,
        ccy,
        amount,
        at,
      })
    }
  }
  // Rail side: a payment whose reference no transaction with an entry on the account carries, at any time.
  const refs = [...onRail]
  const known = refs.length ? await refsWithEntries(q, { account, refs, ref }) : new Set<string>()
  for (const p of payments) {
    if (!known.has(p.ref))
      orphans.push({
        rail,
        side: 'rail',
        reason: 'not_in_ledger',
        ref: p.ref,
        txnId: null,
        ccy,
        amount: formatMinor(p.direction === 'in' ? p.amountMinor : -p.amountMinor, ccy),
        at: p.at,
      })
  }
  orphans.push(...(await amountMismatches(q, { rail, ccy, account, payments, known, ref })))
  return orphans
}

async function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new ReadTimeout()), ms)
      }),
    ])
  } finally {
    clearTimeout(timer)
  }
}

/** What the rail says it holds of `ccy`: its reserves(), else its check()'s balance; null when it cannot say. */
async function readRail(
  configured: ReconcilableRail,
  ccy: string,
  timeoutMs: number,
): Promise<
  | { balance: bigint; incoming: bigint | null; source: 'reserves' | 'check'; other?: Record<string, bigint> }
  | { unknown: string }
> {
  const { impl } = configured
  try {
    if (typeof impl.reserves === 'function') {
      const r: RailReserves = await withTimeout(impl.reserves(), timeoutMs)
      const balance = r.balances[ccy]
      if (balance === undefined) return { unknown: `the rail reported no ${ccy} balance` }
      const other = Object.fromEntries(Object.entries(r.balances).filter(([c]) => c !== ccy))
      return {
        balance,
        incoming: r.incoming[ccy] ?? null,
        source: 'reserves',
        ...(Object.keys(other).length ? { other } : {}),
      }
    }
    if (typeof impl.check === 'function') {
      const report = await withTimeout(impl.check(), timeoutMs)
      const text = report.balances?.[ccy]
      if (text === undefined) return { unknown: `the ${configured.adapter} check reported no ${ccy} balance` }
      if (/^0+(\.0+)?$/.test(text)) return { balance: 0n, incoming: null, source: 'check' }
      const parsed = parseAmount(text, ccy)
      if (!parsed.ok)
        return { unknown: `the ${configured.adapter} check reported a ${ccy} balance that ${parsed.issue}` }
      return { balance: parsed.minor, incoming: null, source: 'check' }
    }
    return { unknown: `the ${configured.adapter} adapter cannot report its balance yet` }
  } catch (err) {
    if (err instanceof ReadTimeout) return { unknown: `no answer within ${timeoutMs} ms` }
    const text = ((err as Error).message ?? String(err)).replace(/\s+/g, ' ').trim().slice(0, 300)
    return { unknown: `the rail failed: ${text}` }
  }
}

/** The ledger's side: what each system account says its rail holds, sends in flight, wallet totals. */
async function readLedger(
  q: Queryable,
  railCurrencies: RailCurrencies,
): Promise<{
  held: Map<string, bigint>
  outgoing: Map<string, bigint>
  liabilities: Map<string, bigint>
  capital: Map<RailKind, bigint>
}> {
  const ids = railCurrencies.map((r) => systemAccountId(r.rail as SystemPurpose, r.ccy))
  const held = new Map<string, bigint>()
  for (const [id, total] of await postingSums(q, ids)) held.set(id, -total)
  // What will still leave by each rail, as each sending kind declares it leaves.
  const outgoing = await inFlightSendTotals(q, railCurrencies)
  const liabilities = await walletTotalsByCurrency(q)
  return { held, outgoing, liabilities, capital: await capitalByRail(q) }
}

/** Reconcile every configured rail: all rails are read at once, each within `timeoutMs`. */
export async function reconcile(
  q: Queryable,
  rails: ReconcilableRail[],
  opts: { timeoutMs: number; now?: number; windowMs?: number; railCurrencies: RailCurrencies },
): Promise<ReconciliationReport> {
  const { railCurrencies } = opts
  const byRail = new Map(rails.map((r) => [r.rail, r]))
  const [ledger, reads] = await Promise.all([
    readLedger(q, railCurrencies),
    Promise.all(
      railCurrencies.map(async ({ rail, ccy }) => {
        const configured = byRail.get(rail)
        return configured ? readRail(configured, ccy, opts.timeoutMs) : null
      }),
    ),
  ])
  const internal: Internal[] = []
  railCurrencies.forEach(({ rail, ccy, kind }, i) => {
    const configured = byRail.get(rail)
    if (!configured) return
    const read = reads[i]!
    const held = ledger.held.get(systemAccountId(rail as SystemPurpose, ccy)) ?? 0n
    const outgoing = ledger.outgoing.get(kind) ?? 0n
    const base = {
      rail,
      ccy,
      adapter: configured.adapter,
      ledger: formatMinor(held, ccy),
      outgoing: formatMinor(outgoing, ccy),
      ...(ledger.capital.has(rail) ? { capital: formatMinor(ledger.capital.get(rail)!, ccy) } : {}),
    }
    if ('unknown' in read) {
      internal.push({
        entry: {
          ...base,
          status: 'unknown',
          reported: null,
          incoming: null,
          delta: null,
          note: read.unknown,
        },
        reportedMinor: null,
      })
      return
    }
    const incoming = read.incoming ?? 0n
    const delta = read.balance - incoming - (held - outgoing)
    internal.push({
      entry: {
        ...base,
        status: delta < 0n ? 'deficit' : delta > 0n ? 'surplus' : 'ok',
        reported: formatMinor(read.balance, ccy),
        incoming: read.incoming === null ? null : formatMinor(read.incoming, ccy),
        delta: formatMinor(delta, ccy),
        source: read.source,
        ...(read.other
          ? {
              otherBalances: Object.fromEntries(
                Object.entries(read.other)
                  .filter(([c]) => OTHER_SCALE[c] !== undefined)
                  .map(([c, v]) => [c, formatScaled(v, OTHER_SCALE[c]!)]),
              ),
            }
          : {}),
        ...(read.incoming === null
          ? { note: 'the rail does not say what part of its balance is still arriving: counted as none' }
          : {}),
      },
      reportedMinor: read.balance,
    })
  })
  const currencies: CurrencyPosition[] = []
  const ccys = [...new Set([...railCurrencies.map((r) => r.ccy), ...ledger.liabilities.keys()])].sort()
  for (const ccy of ccys) {
    const owed = ledger.liabilities.get(ccy) ?? 0n
    const mine = internal.filter((x) => x.entry.ccy === ccy)
    const known = mine.every((x) => x.reportedMinor !== null)
    const assets = mine.reduce((sum, x) => sum + (x.reportedMinor ?? 0n), 0n)
    currencies.push({
      ccy,
      liabilities: formatMinor(owed, ccy),
      assets: known ? formatMinor(assets, ccy) : null,
      coverage: known ? formatMinor(assets - owed, ccy) : null,
    })
  }
  const entries = internal.map((x) => x.entry)
  const now = opts.now ?? Date.now()
  const since = now - (opts.windowMs ?? MATCH_WINDOW_MS)
  const orphans: Orphan[] = []
  const unmatched: ReconciliationReport['unmatched'] = []
  for (const { rail, ccy } of railCurrencies) {
    const configured = byRail.get(rail)
    if (!configured) continue
    const matched = await matchItems(q, configured, ccy, since, opts.timeoutMs, now)
    if ('unknown' in matched) unmatched.push({ rail, note: matched.unknown })
    else orphans.push(...matched)
  }
  return {
    ok: entries.every((e) => e.status !== 'deficit') && orphans.length === 0,
    incomplete: entries.some((e) => e.status === 'unknown'),
    checkedAt: now,
    rails: entries,
    currencies,
    orphans,
    unmatched,
  }
}

/** The readable table `svcpay reconcile` prints. */
export function formatReconciliation(report: ReconciliationReport): string {
  const header = ['RAIL', 'CCY', 'ADAPTER', 'STATUS', 'LEDGER', 'OUTGOING', 'REPORTED', 'INCOMING', 'DELTA']
  const rows = report.rails.map((e) => [
    e.rail,
    e.ccy,
    e.adapter,
    e.status,
    e.ledger,
    e.outgoing,
    e.reported ?? 'unknown',
    e.incoming ?? '-',
    e.delta ?? 'unknown',
  ])
  const table = (head: string[], body: string[][]) => {
    const widths = head.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]!.length)))
    return [head, ...body].map((cells) =>
      cells
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
  }
  const out = table(header, rows)
  const notes = report.rails.filter((e) => e.note).map((e) => `  ${e.rail}: ${e.note}`)
  const capital = report.rails.filter((e) => e.capital !== undefined)
  if (capital.length)
    out.push(
      '',
      `Operator capital in LEDGER: ${capital.map((e) => `${e.rail} ${e.capital} ${e.ccy}`).join(', ')}`,
    )
  if (notes.length) out.push('', 'Notes:', ...notes)
  out.push(
    '',
    ...table(
      ['CCY', 'LIABILITIES', 'ASSETS', 'COVERAGE'],
      report.currencies.map((c) => [c.ccy, c.liabilities, c.assets ?? 'unknown', c.coverage ?? 'unknown']),
    ),
  )
  if (report.pausedRails?.length)
    out.push('', `Sends paused on: ${report.pausedRails.join(', ')} (RECONCILE_HALT_SENDS).`)
  if (report.orphans.length) {
    out.push('', 'Orphans:')
    for (const o of report.orphans)
      out.push(
        o.reason === 'amount_mismatch'
          ? `  ${o.rail} amounts differ: the rail moved ${o.railAmount} ${o.ccy}, the ledger posted ${o.ledgerAmount} ${o.ccy} ref ${o.ref ?? '-'} txn ${o.txnId ?? '-'}`
          : `  ${o.rail} ${o.side === 'rail' ? 'on the rail, not in the ledger' : o.reason === 'entry_without_transaction' ? 'a ledger entry without a transaction' : 'in the ledger, not on the rail'}: ${o.amount} ${o.ccy} ref ${o.ref ?? '-'} txn ${o.txnId ?? '-'}`,
      )
  }
  if (report.unmatched.length)
    out.push('', 'Not matched:', ...report.unmatched.map((u) => `  ${u.rail}: ${u.note}`))
  const deficits = report.rails.filter((e) => e.status === 'deficit')
  out.push('')
  if (deficits.length)
    out.push(
      `DEFICIT on ${deficits.map((e) => `${e.rail} (${e.delta} ${e.ccy})`).join(', ')}: see docs/reconciliation.md`,
    )
  else if (report.orphans.length) out.push(`${report.orphans.length} ORPHAN(S): see docs/reconciliation.md`)
  else if (report.incomplete) out.push('No deficit found, but some rails could not be read (unknown).')
  else out.push('Every rail reconciles: no deficit.')
  return out.join('\n')
}

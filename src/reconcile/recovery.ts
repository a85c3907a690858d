/**
 * Recovery after a restore (issue 32, docs/operations.md "Backup and restore"). A restored
 * database does not know what the rails did after its backup was taken: a payout submitted, a
 * Lightning payment made, a TRON transfer broadcast. A worker that finds such a send "not yet
 * handed to the rail" would hand it again and pay twice. So a restore opens a recovery period
 * (`svcpay restore`, or `svcpay recovery begin` as the last step of a PostgreSQL restore), and
 * while it is open:
 *
 * - no rail call that moves money is made: the sends brake (src/rails/rail.ts SendsBrake), which
 *   every step that hands money to a rail asks first, holds every rail (`recoveryBrake`). What is
 *   already on the rail is still followed: a payout the database knows as submitted is asked
 *   about, and a Lightning send asks the node for its payment hash before anything else, so one
 *   the node already made is completed, not made again;
 * - a recovery check (`runRecoveryCheck`: the worker, each minute, and `svcpay recovery check`)
 *   reconciles every rail against the ledger over the matching window and takes up the sends the
 *   rail made that the database still holds as not handed to it (a TRON payout whose transfer the
 *   chain executed, checked for its recipient and amount), so that they are completed, not repeated;
 * - payments the rail made that no transaction explains stay listed (the console's attention
 *   list, `svcpay recovery status`) with what the rail said, for an operator to settle.
 *
 * The period ends by itself at the first check that finds every rail read and matched, or when an
 * operator ends it (`svcpay recovery end --note`, audited) after looking at what is listed.
 */
import type { Queryable } from '../db/db.js'
import { sql } from '../db/sql.js'
import { RailFailure, type RailKind, type SendsBrake, type TronRail } from '../rails/rail.js'
import { ApiError } from '../shared/errors.js'
import { txnsInState } from '../transactions/reads.js'
import type { TransactionsService } from '../transactions/service.js'
import type { Orphan } from './reconcile.js'
import { minorOf, type Reconciler } from './service.js'

export interface RecoveryPeriod {
  id: string
  reason: 'restore' | 'operator'
  beganAt: number
  /** When the restored copy was taken, epoch ms, where known. */
  backupTakenAt: number | null
  lastCheck: RecoveryCheck | null
  lastCheckAt: number | null
  endedAt: number | null
  /** `automatic`, or the operator who ended it. */
  endedBy: string | null
  endNote: string | null
}

/** What one recovery check found. */
export interface RecoveryCheck {
  checkedAt: number
  /** Sends the rail had made that the database held as not handed to it: taken up, not repeated. */
  adopted: Array<{ txnId: string; rail: RailKind; ref: string }>
  /** Payments the rail and the ledger do not both know (after the adoptions), as the rail said. */
  orphans: Orphan[]
  /** Rails that could not be read or matched this time, with why. */
  unread: Array<{ rail: RailKind; note: string }>
  /** True when this check found everything matched and ended the period. */
  ended: boolean
}

/** Sends of one kind looked at per check at most (the rest at the next check). */
const PENDING_SENDS_MAX = 500
/** Notes at most this long. */
export const RECOVERY_NOTE_MAX = 500

interface Row {
  id: bigint | string
  reason: RecoveryPeriod['reason']
  began_at: bigint | number
  backup_taken_at: bigint | number | null
  last_check: RecoveryCheck | string | null
  last_check_at: bigint | number | null
  ended_at: bigint | number | null
  ended_by: string | null
  end_note: string | null
}

const num = (v: bigint | number | null): number | null => (v === null ? null : Number(v))

function periodOf(r: Row): RecoveryPeriod {
  return {
    id: String(r.id),
    reason: r.reason,
    beganAt: Number(r.began_at),
    backupTakenAt: num(r.backup_taken_at),
    lastCheck: typeof r.last_check === 'string' ? JSON.parse(r.last_check) : r.last_check,
    lastCheckAt: num(r.last_check_at),
    endedAt: num(r.ended_at),
    endedBy: r.ended_by,
    endNote: r.end_note,
  }
}

/** The open recovery period, if there is one. */
export async function openRecovery(q: Queryable): Promise<RecoveryPeriod | undefined> {
  const { rows } = await q.query<Row>(sql`SELECT * FROM recovery_periods WHERE ended_at IS NULL`)
  return rows[0] ? periodOf(rows[0]) : undefined
}

/** The latest recovery period, open or ended. */
export async function latestRecovery(q: Queryable): Promise<RecoveryPeriod | undefined> {
  const { rows } = await q.query<Row>(sql`SELECT * FROM recovery_periods ORDER BY id DESC LIMIT 1`)
  return rows[0] ? periodOf(rows[0]) : undefined
}

/** Opens a recovery period; one already open is kept (and returned) as it is. */
export async function beginRecovery(
  q: Queryable,
  input: { reason: RecoveryPeriod['reason']; backupTakenAt: number | null; now: number },
): Promise<RecoveryPeriod> {
  await q.query(
    sql`INSERT INTO recovery_periods (reason, began_at, backup_taken_at)
        VALUES (${input.reason}, ${input.now}, ${input.backupTakenAt})
        ON CONFLICT ((true)) WHERE ended_at IS NULL DO NOTHING`,
  )
  const open = await openRecovery(q)
  if (!open) throw new Error('a recovery period was opened and is not open')
  return open
}

/** Ends the open recovery period; undefined when none is open. */
export async function endRecovery(
  q: Queryable,
  input: { by: string; note: string | null; now: number },
): Promise<RecoveryPeriod | undefined> {
  const { rows } = await q.query<Row>(
    sql`UPDATE recovery_periods SET ended_at = ${input.now}, ended_by = ${input.by}, end_note = ${input.note}
        WHERE ended_at IS NULL RETURNING *`,
  )
  return rows[0] ? periodOf(rows[0]) : undefined
}

function recoveryRefusal(): ApiError {
  return new ApiError(
    'sends_paused',
    'Sends are paused: the database was restored and the rails are being reconciled with it. Try again later.',
  )
}

/**
 * The sends brake with recovery on top: while a recovery period is open it holds every rail, and
 * otherwise it is `inner` (the reconciliation brake). One indexed read per send step.
 */
export function recoveryBrake(inner: SendsBrake): SendsBrake {
  const pausedFor: SendsBrake['pausedFor'] = async (q, rail) => {
    if (rail && (await openRecovery(q))) return rail
    return inner.pausedFor(q, rail)
  }
  return {
    pausedFor,
    async refuseIfPaused(q, rail) {
      if (rail && (await openRecovery(q))) throw recoveryRefusal()
      await inner.refuseIfPaused(q, rail)
    },
  }
}

export interface RecoveryDeps {
  db: Queryable
  /** A reconciliation that does not count towards the brake. */
  reconcile: Reconciler
  tron: TronRail
  transactions: () => TransactionsService
  now: () => number
  log?: { warn(obj: object, msg: string): void; info?(obj: object, msg: string): void }
}

/**
 * One recovery check (see the top of this file). Does nothing and returns undefined when no
 * period is open. It asks the rails only: nothing is sent.
 */
export async function runRecoveryCheck(deps: RecoveryDeps): Promise<RecoveryCheck | undefined> {
  const period = await openRecovery(deps.db)
  if (!period) return undefined
  const report = await deps.reconcile()
  const railOrphans = report.orphans.filter((o) => o.side === 'rail' && o.reason === 'not_in_ledger')
  const adopted = await adoptTronTransfers(deps, railOrphans)
  const taken = new Set(adopted.map((a) => `${a.rail}\u0000${a.ref}`))
  const orphans = report.orphans.filter((o) => !(o.ref !== null && taken.has(`${o.rail}\u0000${o.ref}`)))
  const unread: RecoveryCheck['unread'] = [
    ...(await ethereumSendsUnseen(deps)),
    ...report.unmatched,
    ...report.rails
      .filter((r) => r.status === 'unknown')
      .map((r) => ({ rail: r.rail, note: r.note ?? 'the rail did not answer' })),
  ]
  const now = deps.now()
  const ended = orphans.length === 0 && unread.length === 0
  const check: RecoveryCheck = { checkedAt: now, adopted, orphans, unread, ended }
  await deps.db.query(
    sql`UPDATE recovery_periods SET last_check = ${JSON.stringify(check)}::jsonb, last_check_at = ${now}
        WHERE id = ${period.id} AND ended_at IS NULL`,
  )
  if (ended) {
    await endRecovery(deps.db, { by: 'automatic', note: 'every rail read and matched', now })
    deps.log?.info?.({ periodId: period.id }, 'recovery ended: every rail read and matched')
  } else if (orphans.length || unread.length) {
    deps.log?.warn(
      { periodId: period.id, orphans: orphans.length, unread: unread.map((u) => u.rail) },
      'recovery continues: the rails and the restored database do not all match',
    )
  }
  return check
}

/**
 * Ethereum payouts the restored database holds as not yet submitted. The JSON-RPC adapter keeps
 * its record of what it sent (nonces, signed transactions) in this database, and lists its payments
 * from that record, so a restore rolled back the very memory that would show a transfer made after
 * the backup: the rail cannot say it did not pay them. They keep the period open, named, for an
 * operator to look at the hot wallet's transfers since the backup before ending it (an explorer, or
 * the node), as for a Bitcoin send broadcast after the backup.
 */
async function ethereumSendsUnseen(deps: RecoveryDeps): Promise<RecoveryCheck['unread']> {
  const waiting = await txnsInState(deps.db, 'eth_payout', 'srccreated', PENDING_SENDS_MAX)
  if (waiting.length === 0) return []
  const ids = waiting.map((t) => t.id).join(', ')
  return [
    {
      rail: 'ethereum',
      note: `${waiting.length} payout(s) not yet handed to the rail in the restored database (${ids}): check the hot wallet's USDT transfers since the backup before ending recovery`,
    },
  ]
}

/**
 * TRON payouts the restored database holds as not yet submitted (srccreated) whose transfer the
 * chain already executed after the backup: the TronGrid adapter keeps its signed transactions in
 * the database, so after a restore it would sign and send a second one. Each outgoing TRON payment
 * no transaction explains is tried against such payouts of the same amount, through the rail's own
 * check of the transfer's recipient and amount; a match moves the payout to destsent with that
 * transfer, and the flow completes it from there. Each transfer is taken up once.
 */
async function adoptTronTransfers(
  deps: RecoveryDeps,
  railOrphans: Orphan[],
): Promise<RecoveryCheck['adopted']> {
  const outgoing = railOrphans.filter((o) => o.rail === 'tron' && o.ref && o.amount.startsWith('-'))
  if (outgoing.length === 0) return []
  const pending = await txnsInState(deps.db, 'tron_payout', 'srccreated', PENDING_SENDS_MAX)
  const adopted: RecoveryCheck['adopted'] = []
  const used = new Set<string>()
  for (const txn of pending) {
    const to = txn.destDetails.address
    if (typeof to !== 'string') continue
    for (const o of outgoing) {
      const ref = o.ref!
      if (used.has(ref) || -minorOf(o.amount, o.ccy) !== txn.destAmountMinor) continue
      try {
        const state = await deps.tron.getTransfer(ref, { to, amountMinor: txn.destAmountMinor })
        if (state.status !== 'completed' && state.status !== 'pending') continue
      } catch (err) {
        // Another payout's transfer (transfer_mismatch), or a node that did not answer: not this one.
        if (err instanceof RailFailure) continue
        throw err
      }
      let moved = false
      await deps.transactions().apply(txn.id, async (_q, locked, move) => {
        if (locked.state !== 'srccreated') return
        await move('destsent', {
          railRef: ref,
          destDetails: { ...locked.destDetails, txHash: ref },
          nextCheckAtMs: deps.now(),
        })
        moved = true
      })
      if (moved) {
        used.add(ref)
        adopted.push({ txnId: txn.id, rail: 'tron', ref })
      }
      break
    }
  }
  return adopted
}

import { expect } from 'vitest'
import type { Queryable } from '../../src/db/db.js'
import { checkBooks } from '../../src/ledger/ledger.js'
import { FINAL_STATES, type TxnKind, type TxnState } from '../../src/transactions/state-machine.js'
import { serviceKinds } from '../../src/wiring/kinds.js'
import { canTransition as canTransitionIn } from '../../src/transactions/repository.js'

const KINDS = serviceKinds()
const canTransition = (kind: TxnKind, from: TxnState, to: TxnState) =>
  canTransitionIn(KINDS.transitions, kind, from, to)
import { CLAIM_LEASE_MS } from '../../src/transactions/worker.js'

/**
 * Checks that hold for any state the service can be left in, whatever happened to it (races,
 * crashes, dependencies failing): the books balance, every transaction's history is a path through
 * the state machine that ends in its current state, nothing is stranded, and every recorded event
 * reached the webhook receiver. Each returns the problems it found as sentences, so that a failing
 * test says what is wrong. Test code only.
 */

/** The state each kind of transaction is created in (and its first event announces). */
export function initialState(kind: TxnKind): TxnState {
  if (kind === 'payout_return') return 'completed'
  return kind === 'deposit' ? 'srccreated' : 'quoted'
}

/**
 * Every transaction's events, in order, start at its initial state, make only transitions the
 * state machine allows, and end in the state the transaction is in now.
 */
export async function historyProblems(db: Queryable): Promise<string[]> {
  const { rows: txns } = await db.query<{ id: string; kind: TxnKind; state: TxnState }>(
    'SELECT id, kind, state FROM transactions ORDER BY id',
  )
  const { rows: events } = await db.query<{ txn_id: string; txn_state: TxnState }>(
    'SELECT txn_id, txn_state FROM events ORDER BY txn_id, id',
  )
  const byTxn = new Map<string, TxnState[]>()
  for (const e of events) {
    const list = byTxn.get(e.txn_id)
    if (list) list.push(e.txn_state)
    else byTxn.set(e.txn_id, [e.txn_state])
  }
  const problems: string[] = []
  for (const t of txns) {
    const history = byTxn.get(t.id) ?? []
    byTxn.delete(t.id)
    if (history.length === 0) {
      problems.push(`${t.id} (${t.kind}) is ${t.state} but has no events`)
      continue
    }
    if (history[0] !== initialState(t.kind)) {
      problems.push(`${t.id} (${t.kind}) starts at ${history[0]}, not ${initialState(t.kind)}`)
    }
    for (let i = 1; i < history.length; i++) {
      if (!canTransition(t.kind, history[i - 1]!, history[i]!)) {
        problems.push(`${t.id} (${t.kind}) moved ${history[i - 1]} -> ${history[i]}: ${history.join(' > ')}`)
      }
    }
    if (history[history.length - 1] !== t.state) {
      problems.push(`${t.id} (${t.kind}) is ${t.state} but its last event says ${history.at(-1)}`)
    }
  }
  for (const txnId of byTxn.keys()) problems.push(`events for unknown transaction ${txnId}`)
  return problems
}

/**
 * Money moved at most once per transaction, and only for one that got that far: at most one journal
 * entry each, none for a transaction that never executed (quoted, cancelled, expired, failed), one
 * for every completed wallet-funded or credited transaction, and no hold left open on a final one.
 */
export async function moneyProblems(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{
    id: string
    kind: TxnKind
    state: TxnState
    entries: bigint
    open_holds: bigint
  }>(`
    SELECT t.id, t.kind, t.state,
           (SELECT count(*) FROM journal_entries j WHERE j.txn_id = t.id)::int8 AS entries,
           (SELECT count(*) FROM holds h WHERE h.txn_id = t.id AND h.status = 'pending')::int8 AS open_holds
      FROM transactions t`)
  const problems: string[] = []
  for (const t of rows) {
    if (t.entries > 1n) problems.push(`${t.id} (${t.kind}, ${t.state}) has ${t.entries} journal entries`)
    // An on-chain send keeps its hold at destsent and is posted once confirmed, like the payouts.
    const executed = t.state === 'completed'
    if (executed && t.entries === 0n)
      problems.push(`${t.id} (${t.kind}) is ${t.state} without a journal entry`)
    if (!executed && t.entries > 0n && t.state !== 'error') {
      problems.push(`${t.id} (${t.kind}) is ${t.state} but money moved`)
    }
    if (FINAL_STATES.has(t.state) && t.open_holds > 0n)
      problems.push(`${t.id} (${t.kind}) is ${t.state} with an open hold`)
  }
  return problems
}

/** How long after its deadline a transaction may still wait for a busy or restarted worker. */
export const WORKER_SLACK_MS = CLAIM_LEASE_MS + 15_000

/**
 * Transactions that no worker will move on: not final, and either without a next check, overdue for
 * one by more than a claim lease, or past their own deadline (a quote's or invoice's expiry, an
 * on-chain address's lifetime) by more than that. `graceMs` adds a kind's own grace (a Lightning
 * invoice is watched for a minute past its expiry).
 */
export async function stuckTransactions(
  db: Queryable,
  now: number = Date.now(),
  graceMs: Partial<Record<TxnKind, number>> = { ln_receive: 60_000 },
): Promise<string[]> {
  const { rows } = await db.query<{
    id: string
    kind: TxnKind
    state: TxnState
    expires_at: bigint
    next_check_at: bigint | null
  }>('SELECT id, kind, state, expires_at, next_check_at FROM transactions')
  const problems: string[] = []
  for (const t of rows) {
    if (FINAL_STATES.has(t.state)) continue
    if (t.next_check_at === null) {
      problems.push(`${t.id} (${t.kind}) is ${t.state} with no next check`)
      continue
    }
    if (Number(t.next_check_at) < now - WORKER_SLACK_MS) {
      problems.push(`${t.id} (${t.kind}) is ${t.state}, due since ${now - Number(t.next_check_at)} ms`)
    }
    const hasDeadline =
      t.state === 'quoted' || t.state === 'srcintent' || (t.kind === 'ln_receive' && t.state === 'srccreated')
    const deadline = Number(t.expires_at) + (graceMs[t.kind] ?? 0) + WORKER_SLACK_MS
    if (hasDeadline && deadline < now) {
      problems.push(
        `${t.id} (${t.kind}) is still ${t.state} ${now - Number(t.expires_at)} ms after its expiry`,
      )
    }
  }
  return problems
}

/** One webhook request as a receiver saw it: the event id header and the parsed body. */
export interface SeenDelivery {
  eventId: string
  body: { txnId: string; extRefId: string; txnState: string; msg: string; updatedAt: number }
}

/**
 * Every event that was queued for a webhook reached the receiver at least once, with the body the
 * event announces. Also checks the outbox itself: each event of an account whose webhook was live
 * when the event was written has a delivery queued (variant a: every state change).
 */
export async function undeliveredEvents(db: Queryable, seen: SeenDelivery[]): Promise<string[]> {
  const { rows } = await db.query<{
    id: bigint
    txn_id: string
    txn_state: string
    msg: string
    ext_ref_id: string
    updated_at: bigint
    queued: bigint
    webhook_live: boolean
  }>(`
    SELECT e.id, e.txn_id, e.txn_state, e.msg, e.ext_ref_id, e.updated_at,
           (SELECT count(*) FROM webhook_deliveries d WHERE d.event_id = e.id)::int8 AS queued,
           EXISTS (SELECT 1 FROM webhooks w WHERE w.account_id = e.account_id AND w.created_at <= e.created_at
                     AND (w.deleted_at IS NULL OR w.deleted_at > e.created_at)) AS webhook_live
      FROM events e ORDER BY e.id`)
  const byId = new Map<string, SeenDelivery>()
  for (const s of seen) byId.set(s.eventId, s)
  const problems: string[] = []
  for (const e of rows) {
    if (e.queued === 0n) {
      if (e.webhook_live)
        problems.push(`event ${e.id} (${e.txn_id} ${e.txn_state}) was never queued for delivery`)
      continue
    }
    const got = byId.get(`evt_${e.id}`)
    if (!got) {
      problems.push(`event ${e.id} (${e.txn_id} ${e.txn_state}) never reached the receiver`)
      continue
    }
    const expected = {
      txnId: e.txn_id,
      extRefId: e.ext_ref_id,
      txnState: e.txn_state,
      msg: e.msg,
      updatedAt: Number(e.updated_at),
    }
    if (JSON.stringify(got.body) !== JSON.stringify(expected)) {
      problems.push(
        `event ${e.id} arrived as ${JSON.stringify(got.body)}, expected ${JSON.stringify(expected)}`,
      )
    }
  }
  return problems
}

/**
 * The end of every reliability case: the books must balance; then one line says how many operations
 * the case ran and how many webhook events it produced.
 */
export async function finishCase(
  name: string,
  db: Queryable,
  counts: { ops: number; detail?: string },
): Promise<{ events: number; deliveries: number }> {
  const report = await checkBooks(db)
  expect(report, JSON.stringify(report)).toMatchObject({
    ok: true,
    unbalancedEntries: 0,
    walletMismatches: 0,
    holdMismatches: 0,
  })
  const { rows } = await db.query<{ events: bigint; deliveries: bigint }>(
    `SELECT (SELECT count(*) FROM events)::int8 AS events,
            (SELECT count(*) FROM webhook_deliveries WHERE status = 'succeeded')::int8 AS deliveries`,
  )
  const events = Number(rows[0]!.events)
  const deliveries = Number(rows[0]!.deliveries)
  console.log(
    `[reliability] ${name}: ${counts.ops} operations, ${events} webhook events` +
      (deliveries ? ` (${deliveries} delivered)` : '') +
      (counts.detail ? `, ${counts.detail}` : '') +
      '; books balanced',
  )
  return { events, deliveries }
}

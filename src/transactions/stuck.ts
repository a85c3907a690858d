/**
 * Transactions stuck in silence: not final, and their rail has not brought them to an outcome
 * within the rail's own bound (RAIL_<RAIL>_STUCK_AFTER_S). They are listed by
 * `GET /admin/transactions/stuck` and counted per rail by the gauge `svcpay_transactions_stuck`, so
 * that an operator learns of a payout the bank sits on, or a node that stopped answering, before
 * the customer does (docs/operations.md).
 *
 * Two kinds of waiting are told apart:
 * - on the rail (a send or payout in flight, a deposit counting confirmations): stuck once the
 *   transaction has been in its state longer than the bound;
 * - on a payer (an open Lightning invoice, an on-chain address handed out): the rail has nothing to
 *   say until the payer acts, so it is stuck only when it is still open a bound past its expiry, or
 *   when asking the rail about it has failed for longer than the bound.
 *
 * A completed on-chain send whose transaction left the best chain (src/onchain/send-reorgs.ts) is
 * listed too, at once and for as long as it is marked: the customer was debited and the chain no
 * longer shows the payment, so a person has to look.
 */
import client from 'prom-client'
import type { Queryable } from '../db/db.js'
import { sql, type Sql } from '../db/sql.js'
import { RAIL_KINDS, type RailOpsConfig } from '../config/rail-ops.js'
import type { RailKind } from '../rails/rail.js'
import type { Metrics } from '../http/observability.js'
import { FINAL_STATES, type TxnKind } from './state-machine.js'
import type { KindRegistry } from './kinds.js'
import { assert } from '../shared/assert.js'

/**
 * What the listing needs of the kind registry: the kinds it watches (`stuckWatch`) with the rail
 * each waits on, and the states in which a kind waits for a payer (`payerWaits`).
 */
export type StuckKinds = Pick<KindRegistry, 'kindsWith' | 'railOf' | 'payerWaits'>

/** The states no transaction waits in: quoted, and the final ones (the order of migration 018's index). */
const OPEN_EXCLUDES = [
  'quoted',
  'completed',
  'expired',
  'failed',
  'usercanceled',
  'rejected',
  'error',
] as const
assert(
  OPEN_EXCLUDES.length === FINAL_STATES.size + 1 &&
    [...FINAL_STATES].every((state) => OPEN_EXCLUDES.includes(state as never)),
  'the stuck listing excludes exactly the final states and quoted',
)

export interface StuckTransaction {
  txnId: string
  accountId: string
  type: TxnKind
  rail: RailKind
  state: string
  /** Epoch ms: since when it has waited (entered its state, its expiry, or its first failure in a row). */
  since: number
  /**
   * `rail_failing` while the last call to the rail failed, `no_outcome` when it answers without one,
   * `overdue` for a payer wait past its expiry, `unscheduled` when no worker will ever look at it
   * (no next look set: listed at once, whatever the bound), `left_chain` for a completed on-chain
   * send whose transaction is no longer in the best chain (listed at once).
   */
  reason: 'rail_failing' | 'no_outcome' | 'overdue' | 'unscheduled' | 'left_chain'
  /** Failed calls to the rail in a row (0 when its last call was answered). */
  failures: number
  lastError: string | null
  lastAttemptAt: number | null
  lastAnswerAt: number | null
  /** When the worker will look again (epoch ms); null when nothing is scheduled. */
  nextRetryAt: number | null
}

interface Row {
  id: string
  account_id: string
  kind: TxnKind
  state: string
  rail: RailKind
  since: string
  payer_wait: boolean
  left_chain: boolean
  failures: number | null
  last_error: string | null
  last_attempt_at: string | null
  last_answer_at: string | null
  next_check_at: string | null
}

/** The statement's WITH item `stuck`; `now` in epoch ms. */
function stuckSql(kinds: StuckKinds, settings: RailOpsConfig, now: number): Sql {
  const at = sql.param(now)
  // Shared parameters: the CASE appears twice in the statement, its values are bound once.
  const watched = kinds.kindsWith((d) => d.stuckWatch)
  assert(watched.length > 0, 'the stuck listing watches at least one kind')
  const railCase = sql`CASE ${sql.join(
    watched.map((kind) => sql`WHEN t.kind = ${sql.param(kind)} THEN ${sql.param(kinds.railOf(kind))}`),
    sql` `,
  )} END`
  const boundCase = sql`CASE c.rail ${sql.join(
    RAIL_KINDS.map((rail) => sql`WHEN ${rail} THEN ${settings[rail].stuckAfterMs}::bigint`),
    sql` `,
  )} END`
  const payerWait =
    kinds.payerWaits.length === 0
      ? sql`false`
      : sql.join(
          kinds.payerWaits.map(({ kind, state }) => sql`(t.kind = ${kind} AND t.state = ${state})`),
          sql` OR `,
        )
  // Written out, not bound: the partial index transactions_open_idx (migration 018) has this very
  // predicate, and the planner uses it only when it can see the values (our own constants).
  const open = sql.unsafeRaw(`t.state NOT IN (${OPEN_EXCLUDES.map((state) => `'${state}'`).join(', ')})`)
  // Written out for the same reason: the predicate of transactions_left_chain_idx (migration 035).
  // It names the on-chain send's kind as text; test/kinds.test.ts checks that the migration has this
  // predicate and that the kind is declared as the on-chain rail's send.
  const leftChain = sql.unsafeRaw(
    `t.kind = 'onchain_send' AND t.state = 'completed' AND (t.dest_details->>'leftChainAt') IS NOT NULL`,
  )
  return sql`
    candidates AS (
      SELECT t.id, t.account_id, t.kind, t.state, t.src_updated_at, t.expires_at, t.next_check_at,
             ${railCase} AS rail, (${payerWait}) AS payer_wait, false AS after_final,
             false AS left_chain, NULL::bigint AS left_chain_at,
             a.failures, a.first_failed_at, a.last_error, a.last_attempt_at, a.last_answer_at
        FROM transactions t LEFT JOIN rail_attempts a ON a.txn_id = t.id
       -- A send in processing waits for operators, not for its rail: the approvals queue and its
       -- deadline (APPROVAL_TTL_S) look after it (src/approvals/).
       WHERE ${open} AND t.state <> 'processing'
      UNION ALL
      -- A final transaction the worker still has to ask its rail about (a completed bank payout
      -- the partner says changed), while the rail keeps failing.
      SELECT t.id, t.account_id, t.kind, t.state, t.src_updated_at, t.expires_at, t.next_check_at,
             ${railCase} AS rail, false AS payer_wait, true AS after_final,
             false AS left_chain, NULL::bigint AS left_chain_at,
             a.failures, a.first_failed_at, a.last_error, a.last_attempt_at, a.last_answer_at
        FROM rail_attempts a JOIN transactions t ON t.id = a.txn_id
       WHERE a.failures > 0 AND t.next_check_at IS NOT NULL AND NOT (${open}) AND NOT (${leftChain})
      UNION ALL
      -- A completed on-chain send whose transaction left the best chain: listed while it is marked.
      SELECT t.id, t.account_id, t.kind, t.state, t.src_updated_at, t.expires_at, t.next_check_at,
             ${railCase} AS rail, false AS payer_wait, false AS after_final,
             true AS left_chain, (t.dest_details->>'leftChainAt')::bigint AS left_chain_at,
             a.failures, a.first_failed_at, a.last_error, a.last_attempt_at, a.last_answer_at
        FROM transactions t LEFT JOIN rail_attempts a ON a.txn_id = t.id
       WHERE ${leftChain}
    ),
    bounded AS (
      SELECT c.*, ${boundCase} AS bound,
             CASE WHEN c.left_chain THEN c.left_chain_at
                  WHEN c.after_final THEN c.first_failed_at
                  WHEN c.payer_wait THEN
                    CASE WHEN COALESCE(c.failures, 0) > 0 THEN LEAST(c.first_failed_at, c.expires_at) ELSE c.expires_at END
                  ELSE c.src_updated_at END AS since
        FROM candidates c WHERE c.rail IS NOT NULL
    ),
    stuck AS (
      SELECT * FROM bounded b
       WHERE b.since + b.bound <= ${at}::bigint
          OR (COALESCE(b.failures, 0) > 0 AND b.first_failed_at + b.bound <= ${at}::bigint)
          OR b.next_check_at IS NULL
          OR b.left_chain
    )`
}

/** One page of stuck transactions, the longest waiting first, and how many there are in all. */
export async function listStuck(
  q: Queryable,
  kinds: StuckKinds,
  settings: RailOpsConfig,
  now: number,
  page: { page: number; limit: number },
): Promise<{ data: StuckTransaction[]; pagination: { page: number; limit: number; total: number } }> {
  const stuck = stuckSql(kinds, settings, now)
  const offset = (page.page - 1) * page.limit
  const [rows, count] = await Promise.all([
    q.query<Row>(
      sql`WITH ${stuck}
       SELECT id, account_id, kind, state, rail, payer_wait, left_chain, failures, last_error,
              since::text AS since, last_attempt_at::text AS last_attempt_at,
              last_answer_at::text AS last_answer_at, next_check_at::text AS next_check_at
         FROM stuck ORDER BY since, id LIMIT ${sql.int(page.limit)} OFFSET ${sql.int(offset)}`,
    ),
    q.query<{ total: string }>(sql`WITH ${stuck} SELECT count(*)::text AS total FROM stuck`),
  ])
  const num = (text: string | null) => (text === null ? null : Number(text))
  return {
    data: rows.rows.map((row) => {
      const failures = Number(row.failures ?? 0)
      return {
        txnId: row.id,
        accountId: row.account_id,
        type: row.kind,
        rail: row.rail,
        state: row.state,
        since: Number(row.since),
        reason: row.left_chain
          ? 'left_chain'
          : row.next_check_at === null
            ? 'unscheduled'
            : failures > 0
              ? 'rail_failing'
              : row.payer_wait
                ? 'overdue'
                : 'no_outcome',
        failures,
        lastError: row.last_error,
        lastAttemptAt: num(row.last_attempt_at),
        lastAnswerAt: num(row.last_answer_at),
        nextRetryAt: num(row.next_check_at),
      }
    }),
    pagination: { ...page, total: Number(count.rows[0]?.total ?? 0) },
  }
}

/** How many transactions are stuck on each rail (every rail present, 0 when none). */
export async function countStuck(
  q: Queryable,
  kinds: StuckKinds,
  settings: RailOpsConfig,
  now: number,
): Promise<Record<RailKind, number>> {
  const { rows } = await q.query<{ rail: RailKind; n: string }>(
    sql`WITH ${stuckSql(kinds, settings, now)} SELECT rail, count(*)::text AS n FROM stuck GROUP BY rail`,
  )
  const out = Object.fromEntries(RAIL_KINDS.map((rail) => [rail, 0])) as Record<RailKind, number>
  for (const row of rows) out[row.rail] = Number(row.n)
  return out
}

/**
 * The gauge `svcpay_transactions_stuck{rail}`, counted from the database at each scrape (so every
 * instance reports the same numbers). A scrape while the database is away keeps the last counts
 * and logs why.
 */
export function registerStuckGauge(
  metrics: Metrics,
  deps: {
    db: Queryable
    kinds: StuckKinds
    settings: RailOpsConfig
    log: { warn(obj: object, msg: string): void }
  },
): void {
  const gauge = new client.Gauge({
    name: 'svcpay_transactions_stuck',
    help: 'Non-final transactions whose rail has not brought them to an outcome within its bound, and completed on-chain sends out of the best chain',
    labelNames: ['rail'],
    registers: [metrics.registry],
    async collect() {
      try {
        const counts = await countStuck(deps.db, deps.kinds, deps.settings, Date.now())
        for (const rail of RAIL_KINDS) this.set({ rail }, counts[rail])
      } catch (err) {
        deps.log.warn({ error: (err as Error).message }, 'counting stuck transactions failed')
      }
    },
  })
  for (const rail of RAIL_KINDS) gauge.set({ rail }, 0)
}

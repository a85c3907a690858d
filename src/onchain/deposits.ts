import type { Queryable } from '../db/db.js'
import { asAccountId, asTxnId } from '../shared/ids.js'
import { postEntry } from '../ledger/ledger.js'
import type { OnchainOutput } from '../rails/rail.js'
import { RailFailure } from '../rails/rail.js'
import { backoffDelayMs } from '../rails/attempts.js'
import { assert } from '../shared/assert.js'
import {
  getTxn,
  recordConfirmations,
  scheduleCheck,
  setRailRef,
  setSrcFee,
} from '../transactions/repository.js'
import type { Txn } from '../transactions/txn.js'
import { receiveCompletionMsg } from '../transactions/receive-outcome.js'
import { newDeposit } from '../bitcoin/deposit.js'
import { nodeCall } from '../rails/node-call.js'
import { receiveFee, receivePostings } from '../bitcoin/receive-credit.js'
import type { BitcoinDeps } from '../bitcoin/deps.js'
import { sql } from '../db/sql.js'

/**
 * The on-chain deposit watcher. Every address we hand out (a receive's, or an account's static
 * address) is a row of `onchain_addresses` with its own `next_check_at`; the address sweep claims
 * due rows, lists the outputs paying each address, and records every output it has not seen in
 * `onchain_deposits` (txid, vout unique). A new output settles the receive the address was made
 * for when that receive is still waiting (srcintent -> srccreated); any other output (a second
 * payment, a late one, one to a static address) becomes a transaction of its own, kind `deposit`,
 * created in srccreated. Confirmations are then counted by each transaction's own `advance()`.
 * Addresses are watched for ever, less often as they age, so money that arrives is never lost.
 */

/** How often addresses are looked at. A sandbox payment wakes its address at once. */
export const ADDRESS_POLL = {
  /** A receive's address until it expires. */
  liveMs: 15_000,
  /** A static address, and a receive's address for 30 days after its expiry. */
  idleMs: 10 * 60_000,
  /** Older expired addresses. */
  oldMs: 60 * 60_000,
}
const OLD_AFTER_MS = 30 * 86_400_000
/** How long a credited deposit is watched for its block leaving the best chain. */
export const REORG_WATCH_MS = 7 * 86_400_000
/** How long a claimed address is left to one sweeper before another may take it. */
const CLAIM_LEASE_MS = 60_000
const BATCH_MAX = 50

export interface AddressRow {
  address: string
  /** Failed looks in a row (migration 018); 0 once the node answers. */
  rail_failures?: number
  account_id: string
  txn_id: string | null
  kind: 'static' | 'txn'
  derivation_index: number
  expires_at: bigint | null
  next_check_at: bigint | null
  created_at: bigint
}

export function nextAddressCheck(addr: Pick<AddressRow, 'kind' | 'expires_at'>, now: number): number {
  if (addr.kind === 'static' || addr.expires_at === null) return now + ADDRESS_POLL.idleMs
  const expires = Number(addr.expires_at)
  if (now < expires) return Math.min(now + ADDRESS_POLL.liveMs, expires)
  return now + (now - expires < OLD_AFTER_MS ? ADDRESS_POLL.idleMs : ADDRESS_POLL.oldMs)
}

/** A fresh derivation index: a sequence, so no index (and no address) is ever handed out twice. */
export async function nextDerivationIndex(q: Queryable): Promise<number> {
  const { rows } = await q.query<{ n: bigint }>(sql`SELECT nextval('onchain_address_index') AS n`)
  return Number(rows[0]!.n)
}

/** Derive a new address and ask the node to watch it (outside any database transaction). */
export async function newWatchedAddress(deps: BitcoinDeps): Promise<{ address: string; index: number }> {
  const index = await nextDerivationIndex(deps.db)
  const address = deps.keys.receiveAddress(index)
  await nodeCall('Bitcoin node', () => deps.rails.onchain.watchAddress(address, index))
  return { address, index }
}

/** The account's permanent reusable address, made on first use. */
export async function staticAddress(deps: BitcoinDeps, accountId: string): Promise<string> {
  const find = async () =>
    (
      await deps.db.query<{ address: string }>(
        sql`SELECT address FROM onchain_addresses WHERE account_id = ${accountId} AND kind = 'static'`,
      )
    ).rows[0]?.address
  const existing = await find()
  if (existing) return existing
  const { address, index } = await newWatchedAddress(deps)
  const now = (deps.now ?? Date.now)()
  // Two first calls at once: one insert wins, the other's index is simply never used.
  await deps.db.query(
    sql`INSERT INTO onchain_addresses (address, account_id, txn_id, kind, derivation_index, expires_at, next_check_at, created_at)
     VALUES (${address}, ${accountId}, NULL, 'static', ${index}, NULL, ${nextAddressCheck({ kind: 'static', expires_at: null }, now)}, ${now})
     ON CONFLICT (account_id) WHERE kind = 'static' DO NOTHING`,
  )
  const address2 = await find()
  assert(address2, 'the static address exists after insert')
  return address2
}

/**
 * Record the outputs to one address that are not recorded yet. Returns how many were new.
 * Safe to run on many workers at once: the address row is locked while an output is recorded and
 * (txid, vout) is unique.
 */
export async function sweepAddress(deps: BitcoinDeps, address: string): Promise<number> {
  const outputs = await deps.rails.onchain.listOutputs(address)
  const { rows: known } = await deps.db.query<KnownDeposit>(
    sql`SELECT txid, vout, txn_id, amount_sats, credited_at, credited_confirmations, block_hash, reorged_at
       FROM onchain_deposits WHERE address = ${address}`,
  )
  await watchCredited(deps, address, known, outputs)
  if (outputs.length === 0) return 0
  const seen = new Set(known.map((k) => `${k.txid}:${k.vout}`))
  let recorded = 0
  for (const output of outputs) {
    if (seen.has(`${output.txid}:${output.vout}`)) continue
    if (await recordOutput(deps, address, await withPayers(deps, output))) recorded++
  }
  return recorded
}

interface KnownDeposit {
  txid: string
  vout: number
  txn_id: string
  amount_sats: bigint
  credited_at: bigint | null
  credited_confirmations: number | null
  block_hash: string | null
  reorged_at: bigint | null
}

/**
 * Reorganisations: a credited deposit whose transaction the node no longer shows confirmed (back
 * in the mempool after its block left the best chain, double-spent, or gone) is marked
 * `reorged_at` and logged as an error, once; one that is confirmed again is marked
 * `reconfirmed_at`. The credit itself is not undone here: the books stay as they are (balanced),
 * and a person decides, seeing GET /admin/onchain/reorgs. Confirmations only grow while a block
 * stays in the chain, so fewer than at crediting, or a different block, is a reorganisation.
 */
async function watchCredited(
  deps: BitcoinDeps,
  address: string,
  known: KnownDeposit[],
  outputs: OnchainOutput[],
): Promise<void> {
  const now = (deps.now ?? Date.now)()
  for (const d of known) {
    // Reorganisations deeper than a week do not happen; older credits are no longer watched (an
    // address with a long history may also list only its newest transactions).
    if (d.credited_at === null || (d.reorged_at === null && now - Number(d.credited_at) > REORG_WATCH_MS))
      continue
    const output = outputs.find((o) => o.txid === d.txid && o.vout === d.vout)
    const confirmations = output?.confirmations ?? 0
    const movedBlock = Boolean(output?.blockHash && d.block_hash && output.blockHash !== d.block_hash)
    const left = confirmations < 1 || confirmations < (d.credited_confirmations ?? 0) || movedBlock
    if (d.reorged_at === null) {
      if (!left) continue
      const { rowCount } = await deps.db.query(
        sql`UPDATE onchain_deposits SET reorged_at = ${now}, reconfirmed_at = NULL
          WHERE txid = ${d.txid} AND vout = ${d.vout} AND reorged_at IS NULL`,
      )
      if (rowCount > 0)
        deps.log?.error(
          {
            txnId: d.txn_id,
            address,
            txid: d.txid,
            vout: d.vout,
            amountSats: d.amount_sats.toString(),
            confirmations,
            creditedConfirmations: d.credited_confirmations,
            blockHash: output?.blockHash ?? null,
            creditedBlockHash: d.block_hash,
          },
          'a credited on-chain deposit left the best chain (reorganisation): see GET /admin/onchain/reorgs',
        )
    } else if (d.reorged_at !== null && confirmations >= deps.config.onchainConfirmations) {
      // Back in a block, deep enough to be credited again: the alarm is over, the record stays.
      await deps.db.query(
        sql`UPDATE onchain_deposits SET reconfirmed_at = ${now}, block_hash = ${output?.blockHash ?? null}, credited_confirmations = ${confirmations}, reorged_at = NULL
          WHERE txid = ${d.txid} AND vout = ${d.vout} AND reorged_at IS NOT NULL`,
      )
      deps.log?.warn(
        { txnId: d.txn_id, txid: d.txid, vout: d.vout },
        'a reorganised deposit is confirmed again',
      )
    }
  }
}

/** Credited deposits whose block left the best chain, for the operator (newest first). */
export async function reorgedDeposits(
  q: Queryable,
  limit = 100,
): Promise<
  {
    txid: string
    vout: number
    address: string
    amountSats: string
    txnId: string
    creditedAt: number
    reorgedAt: number
  }[]
> {
  const { rows } = await q.query<{
    txid: string
    vout: number
    address: string
    amount_sats: bigint
    txn_id: string
    credited_at: bigint
    reorged_at: bigint
  }>(
    sql`SELECT txid, vout, address, amount_sats, txn_id, credited_at, reorged_at FROM onchain_deposits
      WHERE reorged_at IS NOT NULL ORDER BY reorged_at DESC LIMIT ${limit}`,
  )
  return rows.map((r) => ({
    txid: r.txid,
    vout: r.vout,
    address: r.address,
    amountSats: r.amount_sats.toString(),
    txnId: r.txn_id,
    creditedAt: Number(r.credited_at),
    reorgedAt: Number(r.reorged_at),
  }))
}

async function recordOutput(deps: BitcoinDeps, address: string, output: OnchainOutput): Promise<boolean> {
  const now = (deps.now ?? Date.now)()
  return deps.db.tx(async (q) => {
    const addr = (
      await q.query<AddressRow>(sql`SELECT * FROM onchain_addresses WHERE address = ${address} FOR UPDATE`)
    ).rows[0]
    if (!addr) return false
    const dup = await q.query(
      sql`SELECT 1 FROM onchain_deposits WHERE txid = ${output.txid} AND vout = ${output.vout}`,
    )
    if (dup.rowCount > 0) return false
    const receive =
      addr.kind === 'txn' && addr.txn_id ? await getTxn(q, asTxnId(addr.txn_id), { lock: true }) : undefined
    if (receive && receive.state === 'srcintent') {
      await insertDeposit(q, output, address, receive.id, now)
      await screenSources(q, deps, receive, output)
      await deps.repository.transition(
        q,
        receive,
        'srccreated',
        {
          srcDetails: {
            ...receive.srcDetails,
            txid: output.txid,
            vout: output.vout,
            confirmations: output.confirmations,
          },
          nextCheckAtMs: now,
        },
        { now },
      )
      return true
    }
    const txn = await createDepositTxn(q, deps, addr, output, now)
    await insertDeposit(q, output, address, txn.id, now)
    await screenSources(q, deps, txn, output)
    return true
  })
}

/**
 * A new output with who paid it, asked of the rail (outside any database transaction) when its
 * listing could not say and deposits are screened. A node that fails to answer fails the sweep of
 * this address, which is tried again later: a deposit is not recorded unscreened.
 */
async function withPayers(deps: BitcoinDeps, output: OnchainOutput): Promise<OnchainOutput> {
  const rail = deps.rails.onchain
  if (!deps.depositScreening || output.sources || !rail.payersOf) return output
  const sources = await rail.payersOf(output.txid, output.blockHash)
  return sources.length > 0 ? { ...output, sources } : output
}

/**
 * A new deposit's sources (the addresses its transaction spends, where the rail says) against the
 * deny lists, in the transaction that records it: a hit holds its credit for an operator
 * (advanceDeposit waits), and nothing about it reaches the customer, whose deposit simply waits.
 */
async function screenSources(
  q: Queryable,
  deps: BitcoinDeps,
  txn: Pick<Txn, 'id' | 'accountId' | 'kind'>,
  output: OnchainOutput,
): Promise<void> {
  if (!deps.depositScreening || !output.sources || output.sources.length === 0) return
  const held = await deps.depositScreening.screenDeposit(q, {
    txnId: txn.id,
    accountId: txn.accountId,
    kind: txn.kind,
    sources: output.sources,
  })
  if (held) deps.log?.warn({ txnId: txn.id, txid: output.txid }, 'an on-chain deposit is held by screening')
}

async function insertDeposit(
  q: Queryable,
  output: OnchainOutput,
  address: string,
  txnId: string,
  now: number,
) {
  await q.query(
    sql`INSERT INTO onchain_deposits (txid, vout, address, amount_sats, txn_id, created_at) VALUES (${output.txid}, ${output.vout}, ${address}, ${output.amountSats}, ${txnId}, ${now})`,
  )
}

/** A `deposit` transaction for money that no waiting receive was made for: it starts in srccreated. */
async function createDepositTxn(
  q: Queryable,
  deps: BitcoinDeps,
  addr: AddressRow,
  output: OnchainOutput,
  now: number,
) {
  const fee = receiveFee(deps.config.fees.onchain_receive!, output.amountSats)
  const row = await deps.repository.insertTxn(
    q,
    newDeposit({
      accountId: asAccountId(addr.account_id),
      key: `deposit:${output.txid}:${output.vout}`,
      method: 'on-chain',
      amountMinor: output.amountSats,
      feeMinor: fee,
      srcDetails: {
        address: addr.address,
        txid: output.txid,
        vout: output.vout,
        confirmations: output.confirmations,
        ...(addr.kind === 'static' ? { staticAddress: true } : { forTxnId: addr.txn_id }),
      },
      at: now,
      nextCheckAtMs: now,
    }),
  )
  assert(row, 'a deposit transaction has no extRefId to collide on')
  await setRailRef(q, row.id, addr.address)
  await deps.repository.recordEvent(q, row)
  return row
}

/**
 * Count the confirmations of the deposit that settles `txn` (a receive or a deposit in srccreated);
 * complete it, crediting what arrived less the receive fee, once there are enough. A receive paid
 * short or over completes with `msg` `underpaid` or `overpaid` (receive-outcome.ts).
 */
export async function advanceDeposit(
  deps: BitcoinDeps,
  txn: Txn,
  retryMs: number,
  pollMs: number,
): Promise<void> {
  const now = deps.now ?? Date.now
  const { rows } = await deps.db.query<{ txid: string; vout: number; address: string; amount_sats: bigint }>(
    sql`SELECT txid, vout, address, amount_sats FROM onchain_deposits WHERE txn_id = ${txn.id} ORDER BY created_at LIMIT 1`,
  )
  const deposit = rows[0]
  assert(deposit, `transaction ${txn.id} in srccreated has its deposit`)
  let outputs: OnchainOutput[]
  try {
    outputs = await deps.rails.onchain.listOutputs(deposit.address)
  } catch (err) {
    if (!(err instanceof RailFailure)) throw err
    await scheduleTxn(deps, txn, now() + retryMs)
    return
  }
  const output = outputs.find((o) => o.txid === deposit.txid && o.vout === deposit.vout)
  const confirmations = output?.confirmations ?? 0
  if (confirmations < deps.config.onchainConfirmations) {
    // A payment that left the mempool (replaced, or a reorganisation) is simply waited for.
    await recordConfirmations(deps.db, txn.id, confirmations, now() + pollMs)
    return
  }
  // A deposit from a listed source is not credited until an operator releases it (src/screening);
  // its release looks at it again at once.
  if (await deps.depositScreening?.depositHeld(deps.db, txn.id)) {
    await recordConfirmations(deps.db, txn.id, confirmations, now() + pollMs)
    return
  }
  await deps.transactions().apply(txn.id, async (q, t) => {
    if (t.state !== 'srccreated') return
    const walletId = await deps.accounts.walletId(q, t.accountId, 'BTC')
    assert(walletId, 'the receiving account has a BTC wallet')
    const received = deposit.amount_sats
    const fee = receiveFee(deps.config.fees.onchain_receive!, received)
    const at = now()
    await postEntry(q, {
      txnId: t.id,
      kind: t.kind,
      now: at,
      postings: receivePostings('onchain', walletId, received, fee),
    })
    // The fee was quoted on the amount asked for; it is charged on what arrived.
    if (fee !== t.srcFeeMinor) await setSrcFee(q, t.id, fee)
    // How it was credited, so that the sweep can tell if its block later leaves the chain.
    await q.query(
      sql`UPDATE onchain_deposits SET credited_at = ${at}, credited_confirmations = ${confirmations}, block_hash = ${output?.blockHash ?? null}
        WHERE txid = ${deposit.txid} AND vout = ${deposit.vout}`,
    )
    await deps.repository.transition(
      q,
      t,
      'completed',
      {
        // A receive asked for an amount; a deposit took whatever came.
        msg: t.kind === 'onchain_receive' ? receiveCompletionMsg(t.srcAmountMinor, received) : '',
        srcSettledMinor: received,
        destSettledMinor: received - fee,
        srcDetails: { ...t.srcDetails, confirmations },
      },
      { now: at },
    )
  })
}

async function scheduleTxn(deps: BitcoinDeps, txn: Txn, at: number) {
  await scheduleCheck(deps.db, txn.id, at, 'earliest', { state: txn.state })
}

/**
 * One pass of the address sweep: claim due addresses (several workers skip each other's rows),
 * record new outputs, and set each address's next look. Returns true when the batch was full.
 */
export async function runDueAddresses(
  deps: BitcoinDeps & { log: { error(obj: object, msg: string): void } },
): Promise<boolean> {
  const now = (deps.now ?? Date.now)()
  const lease = now + CLAIM_LEASE_MS
  const { rows } = await deps.db.query<AddressRow>(
    sql`UPDATE onchain_addresses SET next_check_at = ${lease}
      WHERE address IN (SELECT address FROM onchain_addresses WHERE next_check_at <= ${now}
                         ORDER BY next_check_at LIMIT ${sql.int(BATCH_MAX)} FOR UPDATE SKIP LOCKED)
      RETURNING *`,
  )
  for (const addr of rows) {
    try {
      await sweepAddress(deps, addr.address)
      // Our lease is replaced by the next look, unless a payment woke the address meanwhile.
      const next = sql.param(nextAddressCheck(addr, (deps.now ?? Date.now)()))
      await deps.db.query(
        sql`UPDATE onchain_addresses
            SET next_check_at = CASE WHEN next_check_at = ${lease} THEN ${next} ELSE LEAST(next_check_at, ${next}) END
          WHERE address = ${addr.address}`,
      )
      if (addr.rail_failures) await resetAddressFailures(deps, addr.address)
    } catch (err) {
      // The lease brings it back later; one unreachable answer must not stop the others.
      deps.log.error({ address: addr.address, error: (err as Error).message }, 'sweeping an address failed')
      if (err instanceof RailFailure && err.retryable) await backOffAddress(deps, addr.address, lease)
    }
  }
  return rows.length === BATCH_MAX
}

/**
 * A look at an address failed because the node did not answer: count it, and put the next look off
 * by the on-chain rail's backoff (src/rails/attempts.ts) when that is later than the lease, so that
 * a node that is down is not asked about every address every minute.
 */
async function backOffAddress(deps: BitcoinDeps, address: string, lease: number): Promise<void> {
  const { rows } = await deps.db.query<{ rail_failures: number }>(
    sql`UPDATE onchain_addresses SET rail_failures = rail_failures + 1 WHERE address = ${address} RETURNING rail_failures`,
  )
  const failures = Number(rows[0]?.rail_failures ?? 1)
  const at = (deps.now ?? Date.now)() + backoffDelayMs(deps.config.railOps.onchain, failures)
  const atParam = sql.param(at)
  const leaseParam = sql.param(lease)
  await deps.db.query(
    sql`UPDATE onchain_addresses SET next_check_at = ${atParam} WHERE address = ${address} AND next_check_at = ${leaseParam} AND ${atParam} > ${leaseParam}`,
  )
}

async function resetAddressFailures(deps: BitcoinDeps, address: string): Promise<void> {
  await deps.db.query(sql`UPDATE onchain_addresses SET rail_failures = 0 WHERE address = ${address}`)
}

import { sql } from '../db/sql.js'
import { postEntry, systemAccountId } from '../ledger/ledger.js'
import { assert } from '../shared/assert.js'
import { parseRate } from '../shared/amount.js'
import { receiveIntoWalletPostings } from '../transactions/receive-fx.js'
import { setRailRef } from '../transactions/repository.js'
import { txnByRailRef } from '../transactions/reads.js'
import type { Txn } from '../transactions/txn.js'
import { newDeposit } from '../bitcoin/deposit.js'
import { receiveFee } from '../bitcoin/receive-credit.js'
import type { BitcoinDeps } from '../bitcoin/deps.js'
import { MSAT_PER_SAT, receiveFor } from './invoices.js'

/**
 * An invoice of ours that was paid twice: settled inside the service by another account's send, and
 * also on the node by an outside payer before the node's copy could be cancelled. The node holds the
 * outside payer's money, so it is credited to the invoice's owner as a `deposit` of its own (method
 * lightning, `rail_ref` the payment hash; at most one per hash), completed at once, with the
 * Lightning receive fee. Nothing is dropped, and nothing is credited twice.
 *
 * The deposit goes into the wallet the receive credits, at the receive's quoted rate: the payer
 * paid the same invoice, on the terms its owner asked for (a USDT or VND wallet), and it arrives
 * while that invoice could still be paid, before the quote's expiry and grace. A deposit into the
 * BTC wallet instead would leave bitcoin where the owner asked for none; a fresh rate would need a
 * quote nobody asked for. The fee is the receive fee on what arrived, in bitcoin, as for any
 * deposit; the rest converts rounded down.
 */
export async function creditSecondPayment(deps: BitcoinDeps, paymentHash: string): Promise<Txn | undefined> {
  const invoice = await deps.rails.lightning.lookupInvoice(paymentHash)
  if (invoice.state !== 'settled') return undefined
  const paidSats = invoice.amountPaidMsat / MSAT_PER_SAT
  if (paidSats <= 0n) return undefined
  const now = (deps.now ?? Date.now)()
  return deps.db.tx(async (q) => {
    await q.query(sql`SELECT pg_advisory_xact_lock(hashtextextended(${`ln_second:${paymentHash}`}, 0))`)
    const receive = await receiveFor(q, paymentHash, true)
    if (!receive) return undefined
    const done = await txnByRailRef(q, 'deposit', paymentHash)
    if (done) return done
    const walletId = await deps.accounts.walletId(q, receive.accountId, receive.destCcy)
    assert(walletId, `the receiving account has a ${receive.destCcy} wallet`)
    const fee = receiveFee(deps.config.fees.lightning_receive!, paidSats)
    const { postings, creditedMinor } = receiveIntoWalletPostings({
      railAccount: systemAccountId('lightning', 'BTC'),
      walletId,
      srcCcy: 'BTC',
      destCcy: receive.destCcy,
      receivedMinor: paidSats,
      feeMinor: fee,
      fxRate: parseRate(receive.fxRate),
    })
    const row = await deps.repository.insertTxn(
      q,
      newDeposit({
        accountId: receive.accountId,
        key: `ln_second:${paymentHash}`,
        method: 'lightning',
        amountMinor: paidSats,
        feeMinor: fee,
        srcDetails: { paymentHash, forTxnId: receive.id, secondPayment: true },
        at: now,
        nextCheckAtMs: null,
        credit: { ccy: receive.destCcy, fxRate: receive.fxRate, amountMinor: creditedMinor },
      }),
      { event: true },
    )
    assert(row, 'a deposit transaction has no extRefId to collide on')
    await setRailRef(q, row.id, paymentHash)
    await postEntry(q, {
      txnId: row.id,
      kind: 'deposit',
      now,
      postings,
    })
    return deps.repository.transition(
      q,
      { ...row, railRef: paymentHash },
      'completed',
      { srcSettledMinor: paidSats, destSettledMinor: creditedMinor },
      { now },
    )
  })
}

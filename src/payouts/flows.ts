/**
 * Payouts out of an internal wallet to an outside network: USDT over TRON (`tron`) and VND to a
 * Vietnamese bank account (`vnd-instant`). Both follow the contract's payout sequence:
 *
 *   quoted -> srccreated (funds held) -> destsent (txHash / bankRef) -> completed | failed | rejected
 *
 * Confirm only moves the transaction to `srccreated` and wakes the worker; the worker hands the
 * payout to the rail (outside any database transaction), records the rail's reference at
 * `destsent`, and asks the rail again until it reports an outcome. The hold placed at create or
 * confirm stays open until that outcome: `completed` posts it (wallet out, fee to revenue, the rest
 * to the network's system account, through FX liquidity when the currencies differ), `failed` and
 * `rejected` void it. Nothing is posted at `destsent`, so an outcome never has to be reversed.
 *
 * A bank transfer can still come back after the partner reported it `completed` (the beneficiary's
 * bank returns it: account closed, name mismatch found late). Told by a partner notification, the
 * worker reads the payout again; `returned` then creates a `payout_return` transaction, completed,
 * whose entry is the payout's entry reversed: the wallet gets back all it paid, fee included. The
 * payout itself stays `completed` (a final state stays final) and names its return in
 * destReq.reqDetails.returnTxnId. One return per payout, however often the partner says so. A
 * payout reported returned before we saw it completed simply fails, its hold released.
 */
import type { Db, Queryable } from '../db/db.js'
import type { Config } from '../config/config.js'
import type { AccountsService } from '../accounts/service.js'
import type { RatesService } from '../rates/service.js'
import { allInRate, ONE } from '../rates/fx.js'
import { createHash } from 'node:crypto'
import { postEntry, systemAccountId, voidHolds, type Posting, type SystemPurpose } from '../ledger/ledger.js'
import { newId } from '../shared/ids.js'
import {
  getTxn,
  markPayoutReturned,
  scheduleCheck,
  settleReturn,
  type TxnRepository,
} from '../transactions/repository.js'
import {
  RailFailure,
  type BankPayoutRail,
  type PayoutState,
  type TronFee,
  type TronRail,
} from '../rails/rail.js'
import { formatScaled } from '../shared/amount.js'
import { decimalDetail } from '../transactions/present.js'
import { validateTronAddress } from './tron/address.js'
import { checkBankAccount, checkKyc, type Kyc } from '../fiat/kyc.js'
import { checkSourceOfFunds, type SourceOfFunds } from '../fiat/source-of-funds.js'
import { ApiError, fieldError } from '../shared/errors.js'
import { assert } from '../shared/assert.js'
import { WAKE_CHANNEL } from '../events/channels.js'
import type { Flow, Quote, QuoteContext } from '../transactions/flow.js'
import type { TxnKind } from '../transactions/state-machine.js'
import type { Txn } from '../transactions/txn.js'
import type { TransactionsService } from '../transactions/service.js'
import { requestedAmount, walletAmounts, walletDebit, walletOutPostings } from '../transactions/money.js'
import { isMoneyError, type MoneyError } from '../transactions/errors.js'

/** Logging of rail trouble. Only codes and the transaction id are logged, never a payout's personal data. */
export interface PayoutLog {
  warn(obj: object, msg: string): void
}

export interface PayoutFlowDeps {
  config: Config
  rates: RatesService
  accounts: AccountsService
  db: Db
  /**
   * The transactions service, for worker-side transitions. A function because the service is built
   * from the list of flows this one belongs to.
   */
  transactions: () => TransactionsService
  /** The writes of transactions, built with the service's webhook variant and clock. */
  repository: TxnRepository
  log: PayoutLog
  now?: () => number
}

export interface TronPayoutDeps extends PayoutFlowDeps {
  tron: TronRail
  /** How long to wait before asking the rail again about a transfer in flight. */
  pollMs: number
}

export interface VndPayoutDeps extends PayoutFlowDeps {
  bank: BankPayoutRail
  /** How long to wait before asking the bank again about a payout in flight. */
  pollMs: number
}

/** What differs between the two payout networks; the lifecycle around it is shared. */
interface PayoutNetwork {
  kind: Extract<TxnKind, 'tron_payout' | 'vnd_payout'>
  /** The ledger's system account the paid-out money leaves through. */
  system: Extract<SystemPurpose, 'tron' | 'bank'>
  /** The name of the rail's reference in destReq.reqDetails. */
  refField: 'txHash' | 'bankRef'
  pollMs: number
  /** The `msg` of a payout the network refused at submission. */
  refusedReason: string
  quote(ctx: QuoteContext): Promise<Quote | MoneyError>
  /** Hand the payout to the rail; idempotent by the transaction id. */
  submit(txn: Txn): Promise<string>
  /** The payout's state, and details to record with a final one (what the network charged). */
  check(ref: string, txn: Txn): Promise<PayoutState & { details?: Record<string, unknown> }>
}

/**
 * What the chain charged the hot wallet for a TRON transfer, kept in destReq.reqDetails as
 * information: the service pays it in TRX, the customer pays the quoted `networkFees` in USDT, so
 * nothing of it is posted to the ledger. Amounts are exact decimal TRX.
 */
export function tronFeeDetails(fee: TronFee): Record<string, unknown> {
  return {
    chainFeeTrx: decimalDetail(formatScaled(fee.totalSun, 6)),
    chainEnergyFeeTrx: decimalDetail(formatScaled(fee.energyFeeSun, 6)),
    chainBandwidthFeeTrx: decimalDetail(formatScaled(fee.netFeeSun, 6)),
    chainEnergyUsed: Number(fee.energyUsed),
    chainBandwidthUsed: Number(fee.bandwidthUsed),
  }
}

/** USDT over TRON: address checked at quote; service fee and a fixed network fee, both in USDT. */
export function tronPayoutFlow(deps: TronPayoutDeps): Flow {
  return payoutFlow(deps, {
    kind: 'tron_payout',
    system: 'tron',
    refField: 'txHash',
    pollMs: deps.pollMs,
    refusedReason: 'rejected_by_network',
    async quote({ input }) {
      const address = input.destReq.reqDetails?.address
      const field = 'destReq.reqDetails.address'
      if (typeof address !== 'string')
        throw fieldError('invalid_address', field, 'a TRON address (T...) is required')
      const checked = validateTronAddress(address)
      if (!checked.ok) throw fieldError('invalid_address', field, checked.issue)
      const networkFee = deps.config.tronNetworkFeeUsdtMinor
      const requested = requestedAmount(input)
      if (isMoneyError(requested)) return requested
      const amounts = walletAmounts({
        requested,
        srcCcy: 'USDT',
        destCcy: 'USDT',
        fx: ONE,
        feeRule: deps.config.fees.tron!,
        networkFee,
        deduct: input.deductNetworkFeesFromDest,
      })
      if (isMoneyError(amounts)) return amounts
      // A TRON payout carries no KYC: none is stored even when a caller sends it.
      return {
        ...amounts,
        srcNetworkFee: networkFee,
        fxRate: ONE,
        srcDetails: {},
        destDetails: { address },
        fromWallet: true,
      }
    },
    async submit(txn) {
      const to = txn.destDetails.address
      assert(typeof to === 'string', 'a TRON payout stores its address')
      return (await deps.tron.sendUsdt({ to, amountMinor: txn.destAmountMinor, requestId: txn.id })).txHash
    },
    async check(ref, txn) {
      const to = txn.destDetails.address
      assert(typeof to === 'string', 'a TRON payout stores its address')
      const state = await deps.tron.getTransfer(ref, { to, amountMinor: txn.destAmountMinor })
      const { fee, ...rest } = state
      return fee ? { ...rest, details: tronFeeDetails(fee) } : rest
    },
  })
}

/**
 * VND to a bank account, from a VND, BTC or USDT wallet (converted at the all-in rate as a swap
 * is). The bank account, the beneficiary's KYC and the source of funds are checked at quote; the
 * KYC is kept on the transaction row only, for the bank, and never logged.
 */
export function vndPayoutFlow(deps: VndPayoutDeps): Flow {
  return payoutFlow(deps, {
    kind: 'vnd_payout',
    system: 'bank',
    refField: 'bankRef',
    pollMs: deps.pollMs,
    refusedReason: 'rejected_by_bank',
    async quote({ input, rates }) {
      const details = input.destReq.reqDetails ?? {}
      const account = checkBankAccount(details.bankAcctNum, details.institutionCode)
      if (!account.ok) throw checkError(account.code, account.details)
      const kyc = checkKyc(input.destReq.kyc)
      if (!kyc.ok) throw checkError(kyc.code, kyc.details)
      const sourceOfFunds = checkSourceOfFunds(input.sourceOfFunds)
      if (!sourceOfFunds.ok) throw checkError(sourceOfFunds.code, sourceOfFunds.details)

      const src = input.sourceReq.ccy
      const fx =
        src === 'VND'
          ? ONE
          : allInRate(deps.rates.perBtc(rates, src), deps.rates.perBtc(rates, 'VND'), deps.config.fxSpreadBps)
      const requested = requestedAmount(input)
      if (isMoneyError(requested)) return requested
      const amounts = walletAmounts({
        requested,
        srcCcy: src,
        destCcy: 'VND',
        fx,
        feeRule: deps.config.fees['vnd-instant']!,
        networkFee: 0n,
        deduct: input.deductNetworkFeesFromDest,
      })
      if (isMoneyError(amounts)) return amounts
      return {
        ...amounts,
        srcNetworkFee: 0n,
        fxRate: fx,
        srcDetails: {},
        destDetails: { ...account.value },
        kyc: kyc.value as unknown as Record<string, unknown>,
        sourceOfFunds: sourceOfFunds.value as unknown as Record<string, unknown>,
        fromWallet: true,
      }
    },
    async submit(txn) {
      const { bankAcctNum, institutionCode } = txn.destDetails
      assert(
        typeof bankAcctNum === 'string' && typeof institutionCode === 'string',
        'a VND payout stores its bank account',
      )
      assert(txn.kyc && txn.sourceOfFunds, 'a VND payout stores its KYC and source of funds')
      const kyc = txn.kyc as unknown as Kyc
      const { bankRef } = await deps.bank.submitPayout({
        requestId: txn.id,
        amountMinor: txn.destAmountMinor,
        ccy: 'VND',
        bankAcctNum,
        institutionCode,
        beneficiary: { type: kyc.type, ...kyc.details },
        sourceOfFunds: txn.sourceOfFunds as unknown as SourceOfFunds,
      })
      return bankRef
    },
    check: (ref) => deps.bank.getPayout(ref),
  })
}

function checkError(code: ApiError['code'], details: { field: string; issue: string }[]): ApiError {
  return new ApiError(code, details.map((d) => `${d.field}: ${d.issue}`).join('; '), details)
}

/** The payout lifecycle shared by both networks. */
function payoutFlow(deps: PayoutFlowDeps, net: PayoutNetwork): Flow {
  const now = deps.now ?? Date.now

  /** Put off the next look at a transaction still in `state` (no event: nothing changed). */
  async function checkAgainLater(
    q: Queryable,
    txnId: string,
    state: Txn['state'],
    at: number,
  ): Promise<void> {
    await scheduleCheck(q, txnId, at, 'exact', { state })
  }

  /** Release the funds and end the payout as failed or rejected. */
  function endWithoutPaying(
    txnId: string,
    from: Txn['state'],
    to: 'failed' | 'rejected',
    reason: string,
    details?: Record<string, unknown>,
  ) {
    return deps.transactions().apply(txnId, async (q, txn, move) => {
      if (txn.state !== from) return
      await voidHolds(q, txn.id, now())
      await move(to, {
        msg: reason,
        ...(details ? { destDetails: { ...txn.destDetails, ...details } } : {}),
      })
    })
  }

  async function submit(txn: Txn): Promise<void> {
    let ref: string
    try {
      ref = await net.submit(txn)
    } catch (err) {
      if (!(err instanceof RailFailure)) throw err
      if (!err.retryable) {
        // The network refused the payout outright: nothing left, so the funds go back. A refusal
        // of the request itself (the rails' `rejected`) ends it rejected, anything else failed.
        if (err.code === 'rejected')
          await endWithoutPaying(txn.id, 'srccreated', 'rejected', net.refusedReason)
        else await endWithoutPaying(txn.id, 'srccreated', 'failed', err.code)
        return
      }
      // A retryable failure is tried again when the worker's claim on the row lapses; resubmitting
      // is safe because the rail is idempotent by the transaction id.
      deps.log.warn({ txnId: txn.id, kind: net.kind, code: err.code }, 'payout submission will be retried')
      return
    }
    await deps.transactions().apply(txn.id, async (_q, locked, move) => {
      if (locked.state !== 'srccreated') return
      await move('destsent', {
        railRef: ref,
        destDetails: { ...locked.destDetails, [net.refField]: ref },
        nextCheckAtMs: now() + net.pollMs,
      })
    })
  }

  async function check(txn: Txn): Promise<void> {
    assert(txn.railRef, 'a payout at destsent has its rail reference')
    let state: PayoutState & { details?: Record<string, unknown> }
    try {
      state = await net.check(txn.railRef, txn)
    } catch (err) {
      if (!(err instanceof RailFailure)) throw err
      if (!err.retryable) {
        // The network no longer knows a payout it accepted: where the money is needs a person.
        // The hold stays open until an operator settles it.
        await deps.transactions().apply(txn.id, async (_q, locked, move) => {
          if (locked.state === 'destsent') await move('error', { msg: err.code })
        })
        return
      }
      deps.log.warn({ txnId: txn.id, kind: net.kind, code: err.code }, 'payout status check will be retried')
      return
    }
    switch (state.status) {
      case 'pending':
        await checkAgainLater(deps.db, txn.id, 'destsent', now() + net.pollMs)
        return
      case 'failed':
      case 'rejected':
        await endWithoutPaying(txn.id, 'destsent', state.status, state.reason, state.details)
        return
      case 'reversed':
        // Sent back before we saw it completed: nothing was posted, so releasing the hold returns
        // the money, and the payout has failed.
        await endWithoutPaying(txn.id, 'destsent', 'failed', state.reason)
        return
      case 'completed':
        await deps.transactions().apply(txn.id, async (q, locked, move) => {
          if (locked.state !== 'destsent') return
          const wallet = await deps.accounts.walletFor(q, locked.accountId, locked.srcCcy)
          assert(wallet, 'a payout is funded from a wallet of its account')
          await postEntry(q, {
            txnId: locked.id,
            kind: net.kind,
            now: now(),
            settleHolds: true,
            postings: payoutPostings(locked, wallet.id, net.system),
          })
          await move('completed', {
            srcSettledMinor: locked.srcAmountMinor,
            destSettledMinor: locked.destAmountMinor,
            ...(state.details ? { destDetails: { ...locked.destDetails, ...state.details } } : {}),
          })
        })
        return
    }
  }

  /**
   * A completed payout the partner says changed (checkPayoutNow): read it, and when it came back,
   * return the money. A partner that cannot answer now is asked again later (the worker's lease
   * and the rail's backoff); any answer ends the look.
   */
  async function lookForReturn(txn: Txn): Promise<void> {
    if (!txn.railRef || typeof txn.destDetails.returnTxnId === 'string') return stopLooking(txn.id)
    let state: PayoutState
    try {
      state = await net.check(txn.railRef, txn)
    } catch (err) {
      if (!(err instanceof RailFailure)) throw err
      if (err.retryable) {
        deps.log.warn(
          { txnId: txn.id, kind: net.kind, code: err.code },
          'payout return check will be retried',
        )
        return
      }
      return stopLooking(txn.id)
    }
    if (state.status === 'reversed') await recordReturn(deps, net, txn.id, state.reason, now())
    await stopLooking(txn.id)
  }

  async function stopLooking(txnId: string): Promise<void> {
    await scheduleCheck(deps.db, txnId, null, 'exact', { state: 'completed' })
  }

  return {
    kind: net.kind,
    quote: (ctx) => net.quote(ctx),
    async confirm(q, _txn, ctx) {
      // The service has placed the hold; the worker submits the payout at once.
      const row = await ctx.transition('srccreated', { nextCheckAtMs: ctx.now })
      await q.notify(WAKE_CHANNEL)
      return row
    },
    async advance(txn) {
      if (txn.state === 'srccreated') await submit(txn)
      else if (txn.state === 'destsent') await check(txn)
      else if (txn.state === 'completed' && net.kind === 'vnd_payout') await lookForReturn(txn)
    },
  }
}

/**
 * The entry of a completed payout. Exactly the destination amount leaves by the network's account,
 * because that is what the network moves: a TRON payout's network fee is burned in TRX, so the USDT
 * the customer paid for it stays in the hot wallet and goes to revenue with the service fee, and
 * reconciliation finds the hot wallet's USDT equal to the books (docs/reconciliation.md).
 */
export function payoutPostings(payout: Txn, walletId: string, system: SystemPurpose): Posting[] {
  const postings = walletOutPostings(payout, walletId, { system })
  if (payout.srcCcy !== payout.destCcy) return postings
  const out = systemAccountId(system, payout.destCcy)
  const leaving = postings.find((p) => p.accountId === out)
  const fees = postings.find((p) => p.accountId === systemAccountId('fees', payout.srcCcy))
  assert(leaving !== undefined && fees !== undefined, 'a payout posts to its network and to revenue')
  const kept = leaving.amount - payout.destAmountMinor
  assert(kept >= 0n, 'a payout never sends more than the wallet paid for it')
  return postings.map((p) =>
    p === leaving
      ? { ...p, amount: payout.destAmountMinor }
      : p === fees
        ? { ...p, amount: p.amount + kept }
        : p,
  )
}

/**
 * The entry of a returned payout: its completion entry with every posting's sign turned, so the
 * wallet gets back its whole debit and the network, FX and fee accounts give back what they got.
 */
export function returnPostings(payout: Txn, walletId: string, system: SystemPurpose): Posting[] {
  return payoutPostings(payout, walletId, system).map((posting) => ({
    ...posting,
    amount: -posting.amount,
  }))
}

/**
 * Return a completed payout's money to its wallet, once: the payout is locked, a payout that has a
 * return already is left alone, and the unique index on a return's rail_ref (migration 018) stands
 * behind that. The return is a transaction of its own, created completed with its event (webhook),
 * its entry in the same database transaction.
 */
async function recordReturn(
  deps: PayoutFlowDeps,
  net: PayoutNetwork,
  payoutId: string,
  reason: string,
  at: number,
): Promise<void> {
  await deps.db.tx(async (q) => {
    const payout = await getTxn(q, payoutId, { lock: true })
    if (!payout || payout.state !== 'completed' || typeof payout.destDetails.returnTxnId === 'string') return
    const wallet = await deps.accounts.walletFor(q, payout.accountId, payout.srcCcy)
    assert(wallet, 'a payout is funded from a wallet of its account')
    const refund = walletDebit(payout)
    const inserted = await deps.repository.insertTxn(q, {
      id: newId('txn'),
      accountId: payout.accountId,
      extRefId: null,
      requestHash: createHash('sha256').update(`payout_return:${payout.id}`).digest('hex'),
      kind: 'payout_return',
      state: 'completed',
      note: null,
      deductFeesFromDest: false,
      srcCcy: payout.destCcy,
      srcMethod: payout.destMethod,
      srcAmountMinor: payout.destAmountMinor,
      srcFeeMinor: 0n,
      srcNetworkFeeMinor: 0n,
      srcDetails: { payoutTxnId: payout.id, [net.refField]: payout.railRef, reason },
      srcCreatedAtMs: at,
      srcUpdatedAtMs: at,
      destCcy: payout.srcCcy,
      destMethod: 'svcpay',
      destAmountMinor: refund,
      destDetails: {},
      destCreatedAtMs: at,
      destUpdatedAtMs: at,
      fxRate: payout.fxRate,
      expiresAtMs: at,
      kyc: null,
      sourceOfFunds: null,
      nextCheckAtMs: null,
      createdAtMs: at,
      updatedAtMs: at,
    })
    assert(inserted, 'a payout return has no extRefId to collide on')
    const ret = await settleReturn(q, inserted.id, {
      payoutId: payout.id,
      reason,
      src: payout.destAmountMinor,
      dest: refund,
    })
    assert(ret, 'the payout return was just inserted')
    await postEntry(q, {
      txnId: ret.id,
      kind: 'payout_return',
      now: at,
      postings: returnPostings(payout, wallet.id, net.system),
    })
    await markPayoutReturned(q, payout, { returnTxnId: ret.id, reason, at })
    await deps.repository.recordEvent(q, ret)
    deps.log.warn(
      { txnId: payout.id, returnTxnId: ret.id, kind: net.kind, reason },
      'a completed payout came back',
    )
  })
}

/**
 * Makes the payout the rail knows as `ref` due now and wakes the worker, which then reads it from
 * the rail: a partner's notification is a hint to look, never a state by itself. A completed bank
 * payout without a return is made due too: the notification may be its return. False when no such
 * payout of that kind has that reference (settled already, or not ours).
 */
export async function checkPayoutNow(
  db: Queryable,
  kind: PayoutNetwork['kind'],
  ref: string,
  now: number,
): Promise<boolean> {
  if (!(await scheduleCheck(db, { kind, payoutRef: ref }, now, 'exact'))) return false
  await db.notify(WAKE_CHANNEL)
  return true
}

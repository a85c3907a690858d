import type { FeeRule } from '../config/config.js'
import type { Queryable } from '../db/db.js'
import type { AccountsService } from '../accounts/service.js'
import type { Rate } from '../shared/amount.js'
import { parseRate } from '../shared/amount.js'
import { assert } from '../shared/assert.js'
import { convertDown } from '../rates/fx.js'
import { postEntry, systemAccountId, type Posting } from '../ledger/ledger.js'
import type { CreateInput, Quote } from './flow.js'
import { isMoneyError, type MoneyError } from './errors.js'
import { requestedAmount, walletAmounts } from './money.js'
import type { Txn } from './txn.js'

/**
 * A receive whose rail currency (what the payer pays: BTC over Lightning, VND by bank transfer)
 * differs from the wallet it is credited to: quoted like a swap from the rail currency into the
 * wallet's, at `fx` (wallet units per rail unit), with the receive fee taken on the rail side.
 * Nothing here knows a rail; a flow passes its rail account and fee rule.
 */

/**
 * The quote. A source amount is what the payer pays: the fee comes out of it and the rest is
 * converted. A destination amount is the least the wallet gets: the payer pays the rail amount
 * whose conversion covers it, plus the fee on that amount (as a same-currency receive does). The
 * quoted destination amount is always the conversion, rounded down, of what the payer pays less
 * the fee, so an exact payment credits exactly it; where one minor unit of the rail currency buys
 * several of the wallet's (a satoshi is worth more than a dong), it may pass a requested amount by
 * less than one rail unit's worth.
 */
export function receiveFxQuote(opts: {
  input: CreateInput
  fx: Rate
  feeRule: FeeRule
  srcDetails: Record<string, unknown>
}): Quote | MoneyError {
  const { input, fx } = opts
  const srcCcy = input.sourceReq.ccy
  const destCcy = input.destReq.ccy
  const requested = requestedAmount(input)
  if (isMoneyError(requested)) return requested
  const amounts = walletAmounts({
    requested,
    srcCcy,
    destCcy,
    fx,
    feeRule: opts.feeRule,
    networkFee: 0n,
    // From the source: the fee comes out of the amount paid. From the destination: the rail
    // amount that covers it, the fee on top.
    deduct: requested.side === 'src',
  })
  if (isMoneyError(amounts)) return amounts
  const srcAmount = requested.side === 'src' ? amounts.srcAmount : amounts.srcAmount + amounts.srcFee
  return {
    srcAmount,
    srcFee: amounts.srcFee,
    srcNetworkFee: 0n,
    destAmount: convertDown(srcAmount - amounts.srcFee, srcCcy, destCcy, fx),
    fxRate: fx,
    srcDetails: opts.srcDetails,
    destDetails: {},
    fromWallet: false,
  }
}

export interface ReceiveIntoWallet {
  /** The rail's system account that the money arrived in (`sys:lightning:BTC`, `sys:bank:VND`). */
  railAccount: string
  walletId: string
  /** The rail's currency, in which `receivedMinor` and `feeMinor` are counted. */
  srcCcy: string
  /** The wallet's currency. */
  destCcy: string
  receivedMinor: bigint
  /** The receive fee, at most `receivedMinor`. */
  feeMinor: bigint
  /** The quoted rate, wallet units per rail unit; unused when the currencies are the same. */
  fxRate: Rate
}

/**
 * The postings of money arriving from a rail into a wallet, one journal entry: the rail account
 * pays what arrived, the fee goes to `sys:fees:<src>`. In one currency the wallet gets the rest;
 * across currencies the rest goes into `sys:fx:<src>`, and `sys:fx:<dest>` pays the wallet its
 * conversion at `fxRate`, rounded down (never more than the rate gives). Sums to zero per currency.
 */
export function receiveIntoWalletPostings(r: ReceiveIntoWallet): {
  postings: Posting[]
  creditedMinor: bigint
} {
  assert(r.feeMinor >= 0n && r.feeMinor <= r.receivedMinor, 'the receive fee is within what arrived')
  const net = r.receivedMinor - r.feeMinor
  const rail: Posting = { accountId: r.railAccount, ccy: r.srcCcy, amount: -r.receivedMinor }
  const fee: Posting = { accountId: systemAccountId('fees', r.srcCcy), ccy: r.srcCcy, amount: r.feeMinor }
  if (r.srcCcy === r.destCcy) {
    return {
      postings: [rail, { accountId: r.walletId, ccy: r.destCcy, amount: net }, fee],
      creditedMinor: net,
    }
  }
  const credited = convertDown(net, r.srcCcy, r.destCcy, r.fxRate)
  return {
    postings: [
      rail,
      fee,
      { accountId: systemAccountId('fx', r.srcCcy), ccy: r.srcCcy, amount: net },
      { accountId: systemAccountId('fx', r.destCcy), ccy: r.destCcy, amount: -credited },
      { accountId: r.walletId, ccy: r.destCcy, amount: credited },
    ],
    creditedMinor: credited,
  }
}

/**
 * Credit a receive: the journal entry of `txn` moving `receivedMinor` (its source currency) from
 * `railAccount` into the account's wallet in its destination currency at its quoted `fxRate`, less
 * `feeMinor`. Runs in the caller's database transaction; returns what the wallet got, the
 * transaction's `destSettledMinor`.
 */
export async function postReceiveEntry(
  accounts: Pick<AccountsService, 'walletId'>,
  q: Queryable,
  txn: Pick<Txn, 'id' | 'accountId' | 'srcCcy' | 'destCcy' | 'fxRate'>,
  r: { railAccount: string; receivedMinor: bigint; feeMinor: bigint; kind: string; now: number },
): Promise<bigint> {
  const walletId = await accounts.walletId(q, txn.accountId, txn.destCcy)
  assert(walletId, `the account has a ${txn.destCcy} wallet`)
  const { postings, creditedMinor } = receiveIntoWalletPostings({
    railAccount: r.railAccount,
    walletId,
    srcCcy: txn.srcCcy,
    destCcy: txn.destCcy,
    receivedMinor: r.receivedMinor,
    feeMinor: r.feeMinor,
    fxRate: parseRate(txn.fxRate),
  })
  await postEntry(q, { txnId: txn.id, kind: r.kind, now: r.now, postings })
  return creditedMinor
}

import { createHash, randomBytes } from 'node:crypto'
import type { Config, FeeRule } from '../config/config.js'
import type { Db, Queryable } from '../db/db.js'
import { WAKE_CHANNEL } from '../events/channels.js'
import type { AccountsService } from '../accounts/service.js'
import type { RatesService } from '../rates/service.js'
import type { BitcoinRails } from './rails.js'
import type { BitcoinKeys } from './keys.js'
import type { LnurlDeps } from '../lightning/send-destination.js'
import { systemAccountId, type Posting } from '../ledger/ledger.js'
import { receiveIntoWalletPostings } from '../transactions/receive-fx.js'
import { newId } from '../shared/ids.js'
import { ApiError } from '../shared/errors.js'
import { RailFailure } from '../rails/rail.js'
import { ONE } from '../rates/fx.js'
import type { CreateInput, Quote } from '../transactions/flow.js'
import { scheduleCheck, type TxnRepository } from '../transactions/repository.js'
import type { NewTxn, Txn } from '../transactions/txn.js'
import type { TransactionsService } from '../transactions/service.js'
import { feeFor, requestedAmount } from '../transactions/money.js'
import { isMoneyError, moneyError, type MoneyError } from '../transactions/errors.js'

/** What the Bitcoin flows, the deposit watcher and the sandbox endpoints are built from. */
export interface BitcoinDeps {
  db: Db
  config: Config
  accounts: AccountsService
  /** Rates, for a receive credited to a wallet in another currency than BTC. */
  rates: RatesService
  rails: BitcoinRails
  keys: BitcoinKeys
  /** The transactions service. It is built from the flows, so it is bound after them. */
  transactions(): TransactionsService
  /** The writes of transactions, built with the service's webhook variant and clock. */
  repository: TxnRepository
  /**
   * How a Lightning send reaches a payee named by address or LNURL (src/lightning/send-destination.ts);
   * by default: https to public addresses only, and no addresses of this service.
   */
  lnurl?: LnurlDeps
  now?: () => number
  log?: { error(obj: object, msg: string): void; warn(obj: object, msg: string): void }
}

/** Wake every worker once the caller's database transaction commits (NOTIFY is sent on commit). */
export async function wakeWorkers(q: Queryable): Promise<void> {
  await q.notify(WAKE_CHANNEL)
}

/**
 * Ask the worker to look at a transaction again at `at`, unless someone asked for an earlier look
 * meanwhile (a sandbox payment sets it to now); only while it is still in the state the caller saw.
 */
export async function checkAgainAt(q: Queryable, txn: Pick<Txn, 'id' | 'state'>, at: number): Promise<void> {
  await scheduleCheck(q, txn.id, at, 'earliest', { state: txn.state })
}

/** A hosted-page id: 128 random bits, URL-safe. It is the page's only secret. */
export const newPageId = () => randomBytes(16).toString('base64url')

export const invoicePageUrl = (config: Config, pageId: string) => `${config.invoicePageUrl}/${pageId}`

/**
 * The quote of a receive. The amount may be given on either side: the destination's is what the
 * wallet is credited, the source's what the payer pays, and they differ by the receive fee, which
 * is computed on whichever amount was given. A source amount the fee takes entirely is a refusal.
 */
export function receiveQuote(
  input: CreateInput,
  rule: FeeRule,
  srcDetails: Record<string, unknown>,
): Quote | MoneyError {
  const requested = requestedAmount(input)
  if (isMoneyError(requested)) return requested
  let srcAmount: bigint
  let fee: bigint
  let destAmount: bigint
  if (requested.side === 'dest') {
    destAmount = requested.minor
    fee = feeFor(rule, destAmount)
    srcAmount = destAmount + fee
  } else {
    srcAmount = requested.minor
    fee = feeFor(rule, srcAmount)
    destAmount = srcAmount - fee
    if (destAmount <= 0n)
      return moneyError(
        'amount_below_fees',
        'sourceReq.amtRequested',
        'is too small to cover the receive fee',
      )
  }
  return {
    srcAmount,
    srcFee: fee,
    srcNetworkFee: 0n,
    destAmount,
    fxRate: ONE,
    srcDetails,
    destDetails: {},
    fromWallet: false,
  }
}

/** The receive fee on what actually arrived; never more than the amount itself. */
export function receiveFee(rule: FeeRule, receivedSats: bigint): bigint {
  const fee = feeFor(rule, receivedSats)
  return fee > receivedSats ? receivedSats : fee
}

/** Postings of money arriving from a network: the network account pays, the wallet and the fee account receive. */
export function receivePostings(
  system: 'lightning' | 'onchain',
  walletId: string,
  receivedSats: bigint,
  feeSats: bigint,
): Posting[] {
  return receiveIntoWalletPostings({
    railAccount: systemAccountId(system, 'BTC'),
    walletId,
    srcCcy: 'BTC',
    destCcy: 'BTC',
    receivedMinor: receivedSats,
    feeMinor: feeSats,
    fxRate: ONE,
  }).postings
}

/** Milliseconds between looks at something that may change any moment: often at first, then less. */
export function pollDelayMs(sinceMs: number, now: number, opts: { minMs: number; maxMs: number }): number {
  const age = Math.max(0, now - sinceMs)
  return Math.min(opts.maxMs, Math.max(opts.minMs, Math.floor(age / 20)))
}

/**
 * Run a node call made on behalf of a request: a node that cannot answer is a 503 the caller may
 * retry (the transaction is left as it was), not a 500.
 */
export async function nodeCall<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (err) {
    if (!(err instanceof RailFailure)) throw err
    throw new ApiError('service_unavailable', `The ${what} is not available right now; try again shortly`)
  }
}

/**
 * A deposit: money that arrived for an account without a quote of its own (an on-chain payment
 * to a watched address, a second payment of a Lightning invoice, a late or second bank transfer
 * with a VND receive's memo), credited to its wallet in `ccy` (BTC unless said) less the receive
 * fee, or, with `credit`, to its wallet in another currency (a later payment for a receive into
 * that wallet, at the receive's quoted rate). `key` names the payment; its hash is the
 * transaction's request hash.
 */
export function newDeposit(d: {
  accountId: string
  key: string
  method: 'on-chain' | 'lightning' | 'vnd-instant'
  ccy?: 'BTC' | 'VND'
  /** What arrived and the receive fee on it, in the source currency's minor units. */
  amountMinor: bigint
  feeMinor: bigint
  srcDetails: Record<string, unknown>
  at: number
  nextCheckAtMs: number | null
  credit?: { ccy: string; fxRate: string; amountMinor: bigint }
}): NewTxn {
  const { at } = d
  return {
    id: newId('txn'),
    accountId: d.accountId,
    extRefId: null,
    requestHash: createHash('sha256').update(d.key).digest('hex'),
    kind: 'deposit',
    state: 'srccreated',
    note: null,
    deductFeesFromDest: false,
    srcCcy: d.ccy ?? 'BTC',
    srcMethod: d.method,
    srcAmountMinor: d.amountMinor,
    srcFeeMinor: d.feeMinor,
    srcNetworkFeeMinor: 0n,
    srcDetails: d.srcDetails,
    srcCreatedAtMs: at,
    srcUpdatedAtMs: at,
    destCcy: d.credit?.ccy ?? d.ccy ?? 'BTC',
    destMethod: 'svcpay',
    destAmountMinor: d.credit?.amountMinor ?? d.amountMinor - d.feeMinor,
    destDetails: {},
    destCreatedAtMs: at,
    destUpdatedAtMs: at,
    fxRate: d.credit?.fxRate ?? '1',
    // Nothing about a deposit can expire; its expiry is its creation.
    expiresAtMs: at,
    kyc: null,
    sourceOfFunds: null,
    nextCheckAtMs: d.nextCheckAtMs,
    createdAtMs: at,
    updatedAtMs: at,
  }
}

/**
 * Request and response types, built on the server's wire types (./wire.ts, taken from the very
 * TypeBox schemas the server validates and documents with).
 *
 * The server's schemas describe amounts as JSON numbers; the SDK maps every amount field to an
 * exact type of your choosing (decimal string or bigint minor units) and `fxRate` to a decimal
 * string, so no float ever holds money.
 */
import type * as Wire from './wire.js'
import type { AmountFormat, AmountInput, AmountOf } from './amounts.js'

/** Field names whose values are amounts in the enclosing object's currency. */
export type AmountKey =
  'amtRequested' | 'amtSettled' | 'svcpayFees' | 'networkFees' | 'amount' | 'availableBalance'

/** Field names whose values are exact decimals that are not amounts (rates). */
type DecimalKey = 'fxRate'

/** A wire type with each amount replaced by `A` and each rate by a decimal string, at any depth. */
export type WithAmounts<T, A> = T extends readonly (infer E)[]
  ? WithAmounts<E, A>[]
  : T extends object
    ? {
        [K in keyof T]: K extends AmountKey
          ? null extends T[K]
            ? A | null
            : A
          : K extends DecimalKey
            ? string
            : WithAmounts<T[K], A>
      }
    : T

/** The error codes of the contract (section 3). New codes may appear; they arrive as plain strings. */
export type ErrorCode = Wire.WireErrorCode | (string & {})

/** The contract's error body: `{ error, message, details? }`. */
export type ErrorBody = Wire.WireErrorBody

/** One problem with one field of a request, as the service names it (`destReq.reqDetails.address`). */
export type ErrorDetail = NonNullable<ErrorBody['details']>[number]

type WireCreateBody = Wire.WireCreateBody
type WireSide = WireCreateBody['sourceReq']

/** One side of a transaction you create; `amtRequested` is a decimal string or bigint minor units. */
export type TransactionSideInput = Omit<WireSide, 'amtRequested'> & { amtRequested?: AmountInput }

/**
 * `destReq.reqDetails` of a Lightning send (`destReq.method: 'lightning'`): exactly one of an
 * invoice, a Lightning Address (LUD-16, `user@domain`) or an LNURL (LUD-01 `lnurl1…` or LUD-17
 * `lnurlp://`). An address or LNURL needs `amtRequested` on one side; the quote fetches the payee's
 * invoice for exactly that amount (over https, never to a private address) and answers it as
 * `destReq.reqDetails.paymentRequest`, with the address or LNURL and comment beside it.
 */
export type LightningSendDetails =
  | { paymentRequest: string }
  | {
      lnAddress: string
      /** LUD-12: passed to the payee when it accepts comments this long (`commentAllowed`). */
      comment?: string
    }
  | { lnurl: string; comment?: string }

/** The payment methods a side of a transaction names (`sourceReq.method`, `destReq.method`). */
export type PaymentMethod = 'svcpay' | 'lightning' | 'on-chain' | 'tron' | 'eth' | 'vnd-instant'

/** Every payment method, in the order the specification lists them. */
export const PAYMENT_METHODS: readonly PaymentMethod[] = [
  'svcpay',
  'lightning',
  'on-chain',
  'tron',
  'eth',
  'vnd-instant',
]

/**
 * `destReq.reqDetails` of a USDT payout over Ethereum (`destReq.method: 'eth'`, `ccy: 'USDT'`,
 * from the USDT wallet): `0x` and 40 hex digits, all lower case, all upper case, or in its EIP-55
 * checksum form; a mixed-case address whose checksum fails is refused with 400 `invalid_address`.
 */
export interface EthPayoutDetails {
  address: string
}

/**
 * `destReq.reqDetails` of an Ethereum payout as the service answers it: the address in its EIP-55
 * form; `maxFeeWei`, the most the transfer may cost the service in gas (wei, decimal text), which
 * the quoted `networkFees` pays for in USDT; `txHash` once sent (the one mined, after any fee
 * replacement, once final); `chainFeeEth`, what the hot wallet actually paid, once final.
 */
export interface EthPayoutResultDetails {
  address: string
  maxFeeWei: string
  txHash?: string
  chainFeeEth?: string
}

/** The body of `POST /api/v2/transaction`, with exact amounts. */
export type CreateTransactionRequest = Omit<WireCreateBody, 'sourceReq' | 'destReq'> & {
  sourceReq: TransactionSideInput
  destReq: TransactionSideInput
}

/**
 * The query of `GET /api/v2/transaction`. Numbers may be given as numbers. Page by number
 * (`page`) or by cursor: `startingAfter` (the last txnId of a page: the next, older page) or
 * `endingBefore` (the first txnId: the previous, newer page). Only a cursor is stable while
 * transactions are being created.
 */
export type ListTransactionsQuery = Omit<Wire.WireListQuery, 'limit' | 'page'> & {
  limit?: number | string
  page?: number | string
}

/** A transaction as every transaction endpoint answers it. */
export type Transaction<F extends AmountFormat = 'decimal'> = WithAmounts<Wire.WireTransaction, AmountOf<F>>

/** One side (sourceReq / destReq) of a transaction in a response. */
export type TransactionSide<F extends AmountFormat = 'decimal'> = Transaction<F>['sourceReq']

/** A wallet: one currency of an account, with its total and spendable balance. */
export type Wallet<F extends AmountFormat = 'decimal'> = WithAmounts<Wire.WireWallet, AmountOf<F>>

/** The transaction states of the spec and the contract. */
export type TxnState =
  | 'quoted'
  | 'srcintent'
  | 'srccreated'
  /** Confirmed, funds held, waiting for the service's operators to approve a large send. */
  | 'processing'
  | 'destsent'
  | 'completed'
  | 'expired'
  | 'failed'
  | 'usercanceled'
  | 'rejected'
  | 'error'

/** States after which a transaction never changes again. */
export const FINAL_STATES: ReadonlySet<string> = new Set([
  'completed',
  'failed',
  'expired',
  'rejected',
  'error',
  'usercanceled',
])

/** Whether a state is final (completed, failed, expired, rejected, error, usercanceled). */
export function isFinalState(state: string): boolean {
  return FINAL_STATES.has(state)
}

/**
 * A status event: the body of a webhook delivery and the `data` of the status stream's
 * `event: status` messages. `extRefId` is `''` when the transaction has none; `msg` is `''` or
 * the reason once failed, rejected, expired or in error.
 */
export type TransactionEvent = Omit<Wire.WireStatusEvent, 'txnState'> & {
  txnState: TxnState | (string & {})
}

/** The pages of `GET /api/v2/transaction`. */
export interface TransactionList<F extends AmountFormat = 'decimal'> {
  data: Transaction<F>[]
  /** `hasMore`: more matches lie beyond this page in its direction. */
  pagination: Wire.WireListPagination
}

/** The answer of the token exchange. */
export type TokenResponse = Wire.WireTokenResponse

/** An account's information. */
export type Account = Wire.WireAccount

/** What you send to claim a Lightning Address: a LUD-16 username and the wallet currency it credits. */
export type LightningAddressInput = Wire.WireLightningAddressInput

/** The account's Lightning Address: `address` is what payers type, `lnurl` what a QR code holds. */
export type LightningAddress = Wire.WireLightningAddress

/** What you send to create the webhook (an update may send either field alone). */
export type WebhookInput = Wire.WireWebhookInput

/** The registered webhook (never with its secret). */
export type Webhook = Wire.WireWebhook

/** The webhook after an update. */
export type WebhookUpdated = Wire.WireWebhookUpdated

/** A new webhook secret, and how long the previous one keeps signing beside it (seconds, at most 7 days). */
export type WebhookRotateInput = Wire.WireWebhookRotateBody

/** The webhook after a rotation: until `previousSecretUntil` each delivery carries both signatures. */
export type WebhookRotated = Wire.WireWebhookRotated

/** An account's limits in the reference currency, what it has used of each, and its overrides. */
export type AccountLimits = Wire.WireAccountLimits

/** The state of one delivery of an event to the webhook. */
export type DeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'cancelled'

/** One delivery of an event to the webhook, with every attempt made. */
export type WebhookDelivery = Wire.WireWebhookDelivery

/** A page of deliveries, newest first. */
export type WebhookDeliveryList = Wire.WireWebhookDeliveryList

/** A bank a fiat payout can go to. */
export type Institution = Wire.WireInstitution

/** The code tables of a payout's sourceOfFunds. */
export type SourceOfFundsCodes = Wire.WireSourceOfFundsCodes

/** The holder of a bank account, as the bank names it (upper case, no diacritics, maybe masked with `*`). */
export type AccountName = Wire.WireAccountName

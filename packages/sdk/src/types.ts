/**
 * Request and response types, taken from the very TypeBox schemas the server validates and
 * documents with. These are type-only imports: they vanish from the JavaScript, so the SDK has no
 * runtime dependency on the server, and a change to a server schema changes these types at once.
 *
 * The server's schemas describe amounts as JSON numbers; the SDK maps every amount field to an
 * exact type of your choosing (decimal string or bigint minor units) and `fxRate` to a decimal
 * string, so no float ever holds money.
 */
import type { Static } from 'typebox'
import type {
  CreateBodySchema,
  ListQuerySchema,
  TransactionSchema,
} from '../../../src/transactions/schemas.js'
import type { AccountSchema, WalletSchema } from '../../../src/accounts/schemas.js'
import type { TokenResponseSchema } from '../../../src/auth/schemas.js'
import type { InstitutionSchema, SourceOfFundsCodesSchema } from '../../../src/fiat/schemas.js'
import type {
  DeliveryOut,
  DeliveryPageOut,
  StatusEventSchema,
  WebhookBody,
  WebhookOut,
  WebhookUpdatedOut,
} from '../../../src/events/schemas.js'
import type { ErrorBodySchema } from '../../../src/http/schemas.js'
import type { ErrorCode as ServerErrorCode } from '../../../src/shared/errors.js'
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
export type ErrorCode = ServerErrorCode | (string & {})

/** The contract's error body: `{ error, message, details? }`. */
export type ErrorBody = Static<typeof ErrorBodySchema>

/** One problem with one field of a request, as the service names it (`destReq.reqDetails.address`). */
export type ErrorDetail = NonNullable<ErrorBody['details']>[number]

type WireCreateBody = Static<typeof CreateBodySchema>
type WireSide = WireCreateBody['sourceReq']

/** One side of a transaction you create; `amtRequested` is a decimal string or bigint minor units. */
export type TransactionSideInput = Omit<WireSide, 'amtRequested'> & { amtRequested?: AmountInput }

/** The body of `POST /api/v2/transaction`, with exact amounts. */
export type CreateTransactionRequest = Omit<WireCreateBody, 'sourceReq' | 'destReq'> & {
  sourceReq: TransactionSideInput
  destReq: TransactionSideInput
}

/** The query of `GET /api/v2/transaction`. Numbers may be given as numbers. */
export type ListTransactionsQuery = Omit<Static<typeof ListQuerySchema>, 'limit' | 'page'> & {
  limit?: number | string
  page?: number | string
}

/** A transaction as every transaction endpoint answers it. */
export type Transaction<F extends AmountFormat = 'decimal'> = WithAmounts<
  Static<typeof TransactionSchema>,
  AmountOf<F>
>

/** One side (sourceReq / destReq) of a transaction in a response. */
export type TransactionSide<F extends AmountFormat = 'decimal'> = Transaction<F>['sourceReq']

/** A wallet: one currency of an account, with its total and spendable balance. */
export type Wallet<F extends AmountFormat = 'decimal'> = WithAmounts<Static<typeof WalletSchema>, AmountOf<F>>

/** The transaction states of the spec and the contract. */
export type TxnState =
  | 'quoted'
  | 'srcintent'
  | 'srccreated'
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
export type TransactionEvent = Omit<Static<typeof StatusEventSchema>, 'txnState'> & {
  txnState: TxnState | (string & {})
}

/** The pages of `GET /api/v2/transaction`. */
export interface TransactionList<F extends AmountFormat = 'decimal'> {
  data: Transaction<F>[]
  pagination: { page: number; limit: number; total: number }
}

/** The answer of the token exchange. */
export type TokenResponse = Static<typeof TokenResponseSchema>

/** An account's information. */
export type Account = Static<typeof AccountSchema>

/** What you send to create the webhook (an update may send either field alone). */
export type WebhookInput = Static<typeof WebhookBody>

/** The registered webhook (never with its secret). */
export type Webhook = Static<typeof WebhookOut>

/** The webhook after an update. */
export type WebhookUpdated = Static<typeof WebhookUpdatedOut>

/** The state of one delivery of an event to the webhook. */
export type DeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'cancelled'

/** One delivery of an event to the webhook, with every attempt made. */
export type WebhookDelivery = Static<typeof DeliveryOut>

/** A page of deliveries, newest first. */
export type WebhookDeliveryList = Static<typeof DeliveryPageOut>

/** A bank a fiat payout can go to. */
export type Institution = Static<typeof InstitutionSchema>

/** The code tables of a payout's sourceOfFunds. */
export type SourceOfFundsCodes = Static<typeof SourceOfFundsCodesSchema>

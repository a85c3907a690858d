import type { Static } from 'typebox'
import type { AccountId } from '../shared/ids.js'
import { ApiError } from '../shared/errors.js'
import type { Queryable } from '../db/db.js'
import type { EntryInput } from '../ledger/ledger.js'
import type { Rate } from '../shared/amount.js'
import type { RateSnapshot } from '../rates/service.js'
import type { TxnKind, TxnState } from './state-machine.js'
import type { Txn, TxnPatch } from './txn.js'
import type { CreateBodySchema } from './schemas.js'
import type { QuoteRefusal } from './errors.js'

/** The create request's body as its schema admits it (amounts still as given). */
export type CreateBody = Static<typeof CreateBodySchema>

/** A create request: the body, with the account it is made for and its defaults filled in. */
export interface CreateInput extends Omit<CreateBody, 'deductNetworkFeesFromDest'> {
  accountId: AccountId
  deductNetworkFeesFromDest: boolean
}

/** What a flow's quote decides; the service stores it as a `quoted` transaction. */
export interface Quote {
  srcAmount: bigint
  srcFee: bigint
  srcNetworkFee: bigint
  destAmount: bigint
  fxRate: Rate
  srcDetails: Record<string, unknown>
  destDetails: Record<string, unknown>
  kyc?: Record<string, unknown>
  sourceOfFunds?: Record<string, unknown>
  /** True when the source is an internal wallet: amount plus fees are held at create and confirm. */
  fromWallet: boolean
}

export interface QuoteContext {
  input: CreateInput
  rates: RateSnapshot
  now: number
}

/** Helpers a flow uses inside the confirm transaction. */
export interface ConfirmContext {
  now: number
  /** Move the locked transaction on, with its outbox event. */
  transition(to: Txn['state'], patch?: TxnPatch): Promise<Txn>
  /** Data prepared outside the database transaction by `prepareConfirm`. */
  prepared: unknown
}

/** A confirm that is one journal entry (settling the quote's hold) and one transition. */
export interface Settlement {
  entry: EntryInput
  to: TxnState
  patch: TxnPatch
}

/**
 * A kind of transaction (a method pair): its quote, what confirm does, and how the worker moves it
 * on afterwards. Flows register in `flows.ts`.
 */
export interface Flow {
  kind: TxnKind
  /** The quote, or why the request is refused (the service answers that as a contract error). */
  quote(ctx: QuoteContext): Promise<Quote | QuoteRefusal>
  /**
   * Work that must not run under a row lock (a call to a node), done before the confirm
   * transaction. Its result reaches `confirm` as `ctx.prepared`.
   */
  prepareConfirm?(txn: Txn): Promise<unknown>
  /**
   * Inside the confirm transaction: the row is locked and `quoted`, and for wallet-funded flows the
   * funds are held. Must make exactly one transition. A flow has this or `settlement`.
   */
  confirm?(q: Queryable, txn: Txn, ctx: ConfirmContext): Promise<Txn>
  /**
   * Instead of `confirm`, for a confirm with nothing to do but one journal entry and one transition
   * (a swap): what they are. The service can then confirm a quote it made in a single statement.
   */
  settlement?(q: Queryable, txn: Txn, now: number): Promise<Settlement>
  /** After the confirm transaction committed: follow-up calls to a rail that must not undo it. */
  afterConfirm?(txn: Txn): Promise<void>
  /** Called by the worker when the transaction's `next_check_at` is due and it is past `quoted`. */
  advance?(txn: Txn): Promise<void>
}

/** The flow of a kind of transaction; refused when this server does not offer that kind. */
export function flowOf(flows: ReadonlyMap<TxnKind, Flow>, kind: TxnKind): Flow {
  const flow = flows.get(kind)
  if (!flow)
    throw new ApiError(
      'method_not_available',
      `Transactions of kind ${kind} are not available on this server`,
    )
  return flow
}

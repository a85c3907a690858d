/**
 * The rail interfaces: one small interface per payment network and direction. Each network has a
 * sandbox implementation (backed by our own database, producing real artefacts) and a real adapter
 * speaking the node's or partner's documented API. The worker drives them; only the worker
 * decides to retry, using `RailFailure.retryable`.
 */
import type { Queryable } from '../db/db.js'
import type { Network } from '../config/network.js'
import type { RailKind } from '../config/rail-ops.js'

/** A failure reported by a rail. `retryable` failures are tried again later by the worker. */
export class RailFailure extends Error {
  override name = 'RailFailure'
  constructor(
    /** A short reason code, used as the transaction's `msg` when it fails (e.g. `route_not_found`). */
    readonly code: string,
    message: string,
    readonly retryable: boolean,
  ) {
    super(message)
  }
}

/** The four kinds of rail, as the reports and metrics name them; declared with their settings. */
export type { RailKind }

/**
 * What `svcpay rails check` (and `GET /admin/rails`) reports of one rail: enough for an operator to
 * know, before going live, that the node or partner is reachable, on the right network, synced,
 * allowed to do what the service asks of it, and funded. A check never moves money.
 */
export interface RailCheckReport {
  rail: RailKind
  /** The adapter's name: `lnd`, `bitcoind`, `esplora`, `trongrid`, `bank-http` or `sandbox`. */
  adapter: string
  /** The node or partner answered at all. */
  reachable: boolean
  /** The node's own version text, where it tells one. */
  version?: string
  /** The network or chain the node says it is on (`mainnet`, `testnet`, `signet`, `regtest`, ...). */
  network?: string
  /** Whether the node reports itself caught up with its chain; absent where there is no such notion. */
  synced?: boolean
  /** Balances the rail reports, exact decimal text per currency (`{ BTC: '0.5', TRX: '12.3' }`). */
  balances?: Record<string, string>
  /** The permissions that were verified, by the node's own names (`offchain:write`, ...). */
  permissions?: string[]
  /** One sentence per problem found; empty when the rail is ready for real money. */
  problems: string[]
}

/** Every rail can be asked how it is. Optional while adapters gain it; the checker reports a rail without one. */
export interface CheckableRail {
  check?(): Promise<RailCheckReport>
}

export interface LightningInvoiceIssued {
  /** The BOLT11 text. */
  paymentRequest: string
  /** Hex payment hash (32 bytes). */
  paymentHash: string
}

export interface LightningInvoiceState {
  state: 'open' | 'settled' | 'canceled'
  /** What the payer actually paid, in millisatoshis (0 until settled). */
  amountPaidMsat: bigint
}

export type LightningPaymentState =
  | { status: 'in_flight' }
  | { status: 'succeeded'; preimage: string; feeMsat: bigint }
  | { status: 'failed'; reason: string }
  /** The node knows no payment with that hash (never started). */
  | { status: 'unknown' }

export interface LightningRail extends CheckableRail, ReservesRail, PaymentsRail {
  readonly name: string
  readonly network: Network
  /** Issue an invoice. `amountMsat` 0 is not used by the service: every receive has an amount. */
  createInvoice(input: {
    amountMsat: bigint
    description: string
    /** Hex SHA-256 the invoice commits to instead of `description` (BOLT11 `h`), for LNURL-pay. */
    descriptionHash?: string
    expirySeconds: number
  }): Promise<LightningInvoiceIssued>
  lookupInvoice(paymentHash: string): Promise<LightningInvoiceState>
  /**
   * Cancel an open invoice so that no outside payer can pay it any more. Used after an invoice was
   * settled inside the service, where the node never saw the payment. Cancelling an invoice that is
   * already cancelled succeeds. An invoice already settled on the node cannot be cancelled: that
   * fails with the final `invoice_already_settled` (its payer's money has arrived).
   */
  cancelInvoice(paymentHash: string): Promise<void>
  /**
   * Start paying an invoice with a routing-fee limit. Idempotent by the invoice's payment hash: a
   * second call for a hash already in flight or paid reports that payment's state, never pays twice.
   * A node may start a payment again whose last attempt failed (LND does), so callers ask
   * `lookupPayment` first and send only for a hash the node does not know.
   */
  sendPayment(input: {
    paymentRequest: string
    amountMsat: bigint
    feeLimitMsat: bigint
  }): Promise<LightningPaymentState>
  lookupPayment(paymentHash: string): Promise<LightningPaymentState>
}

export interface OnchainOutput {
  txid: string
  vout: number
  amountSats: bigint
  /** 0 while in the mempool. */
  confirmations: number
  /** The block that confirmed it, where the node says (a reorganisation changes or removes it). */
  blockHash?: string
  /**
   * The addresses whose outputs its transaction spends (who paid), where the node can say; absent
   * when it cannot. Deposit screening (src/screening) looks them up.
   */
  sources?: readonly string[]
}

/** What the node says of a transaction the service sent. */
export interface OnchainTxState {
  /** 0 while in the mempool (or, with `inMempool: false`, nowhere the node relays from). */
  confirmations: number
  /** False when the node holds it but its mempool does not (refused, evicted): it is not being relayed. */
  inMempool?: boolean
  /** A replacement of ours (a fee bump) that took its place: follow that txid instead. */
  replacedBy?: string
  /**
   * Conflicts with a transaction in the best chain and can never confirm, with the depth of that
   * conflict (Bitcoin Core's negative confirmations, as a positive number).
   */
  conflictedDepth?: number
}

export interface OnchainRail extends CheckableRail, ReservesRail, PaymentsRail {
  readonly name: string
  readonly network: Network
  /**
   * Sending again with the same request id hands the network the very same signed transaction
   * (never a new one), even when the node has forgotten it: safe to call for a lost transaction.
   */
  readonly resendsSameTransaction?: boolean
  /**
   * Why this rail cannot send at all (an Esplora rail without a signer), or absent when it can.
   * The quote of an on-chain send is refused with it, before anything is quoted or held.
   */
  readonly sendUnavailable?: string
  /**
   * Make the node watch an address we derived (import it); a no-op where not needed. `index` is the
   * address's BIP84 receive index, where the rail imports the account's ranged descriptor.
   */
  watchAddress(address: string, index?: number): Promise<void>
  /** Every output paying `address`, confirmed or in the mempool. */
  listOutputs(address: string): Promise<OnchainOutput[]>
  /**
   * Who paid a transaction: the addresses of the outputs its inputs spend, for a rail whose
   * `listOutputs` cannot say (`sources`); asked once per new deposit. Absent where the rail has no
   * way to tell; an empty list when the node cannot say for this transaction.
   */
  payersOf?(txid: string, blockHash?: string): Promise<string[]>
  /** Fee rate in sat/vB for confirmation within `targetBlocks`. */
  estimateFeeRate(targetBlocks: number): Promise<bigint>
  /**
   * Send `amountSats` to `address` from the service's hot wallet at `feeRateSatPerVb`.
   * Idempotent by `requestId`: a second call with the same id returns the first send's txid.
   */
  send(input: {
    address: string
    amountSats: bigint
    feeRateSatPerVb: bigint
    requestId: string
  }): Promise<{ txid: string }>
  /** Confirmations of a transaction the service sent, or null when the node does not know it. */
  getTransaction(txid: string): Promise<OnchainTxState | null>
  /**
   * Replace a stuck unconfirmed send of ours with one paying `feeRateSatPerVb` (BIP 125), where the
   * rail has a wallet that can; returns the replacement's txid. Absent where it cannot.
   */
  bumpFee?(txid: string, feeRateSatPerVb: bigint): Promise<{ txid: string; feeSats?: bigint }>
}

export type PayoutState =
  | { status: 'pending' }
  | { status: 'completed' }
  | { status: 'failed'; reason: string }
  | { status: 'rejected'; reason: string }
  /**
   * The money came back after the network or bank had paid it out (a bank transfer the beneficiary's
   * bank returned). Only the bank rail reports it; the payout flow returns the money to the wallet.
   */
  | { status: 'reversed'; reason: string }

/**
 * What the chain charged the hot wallet for one TRON transaction, as its receipt says: TRX in sun
 * (1 TRX = 1,000,000 sun) burned for energy and bandwidth, and the resources it used. Paid by the
 * service in TRX, not by the customer: information, never posted to the ledger.
 */
export interface TronFee {
  /** `fee`: everything burned (energy_fee + net_fee, and any other fee the chain adds). */
  totalSun: bigint
  energyFeeSun: bigint
  netFeeSun: bigint
  /** `receipt.energy_usage_total` (staked energy plus energy bought with burned TRX). */
  energyUsed: bigint
  /** `receipt.net_usage`: bandwidth bytes taken from staked or free bandwidth (0 when burned). */
  bandwidthUsed: bigint
}

/** A TRON transfer's state; final states of a transfer the chain executed carry its fee. */
export type TronTransferState = PayoutState & { fee?: TronFee }

export interface TronRail extends CheckableRail, ReservesRail, PaymentsRail {
  readonly name: string
  /**
   * Transfer USDT (TRC-20, 6 decimals) from the service's hot wallet to `to`. Idempotent by
   * `requestId`.
   */
  sendUsdt(input: { to: string; amountMinor: bigint; requestId: string }): Promise<{ txHash: string }>
  /**
   * The transfer's state. `expected` (the payout's recipient and amount) is checked against what the
   * chain executed, where the rail can read it.
   */
  getTransfer(txHash: string, expected?: { to: string; amountMinor: bigint }): Promise<TronTransferState>
}

export interface BankBeneficiary {
  type: 'individual' | 'business'
  legalFullName: string
  countryCode: string
}

export interface BankPayoutRail extends CheckableRail, ReservesRail, PaymentsRail, BankAccountInquiryRail {
  readonly name: string
  /** Submit a VND transfer to a bank account. Idempotent by `requestId`. */
  submitPayout(input: {
    requestId: string
    amountMinor: bigint
    ccy: 'VND'
    bankAcctNum: string
    institutionCode: string
    beneficiary: BankBeneficiary
    sourceOfFunds: { purpose: number; source: number; relationship: number }
  }): Promise<{ bankRef: string }>
  getPayout(bankRef: string): Promise<PayoutState>
}

/**
 * What a rail says it holds (reconciliation, issue 18), in minor units of each currency: the
 * node's or partner's own figures, never the ledger's. `balances` is everything the rail holds now,
 * net of sends it has committed to; `incoming` is the part of it that has arrived but is not final
 * yet (an unconfirmed on-chain receive), which the ledger has not credited. A currency the rail
 * cannot read is left out: the reconciliation reports it `unknown`, never zero.
 */
export interface RailReserves {
  balances: Record<string, bigint>
  incoming: Record<string, bigint>
}

/** A rail that can say what it holds. Optional while adapters gain it. */
export interface ReservesRail {
  reserves?(): Promise<RailReserves>
}

/** One payment a rail made or received, as the rail knows it (item matching, issue 18). */
export interface RailPayment {
  /** The reference the service keeps as the transaction's `rail_ref`: payment hash, txid, bank reference. */
  ref: string
  direction: 'in' | 'out'
  /** Minor units of the rail's currency, fees included for an outgoing payment. */
  amountMinor: bigint
  at: number
}

/** A rail that can list the payments it made or received since a time. Optional while adapters gain it. */
export interface PaymentsRail {
  payments?(sinceMs: number): Promise<RailPayment[]>
}

/**
 * What a bank answers to an account inquiry (NAPAS account inquiry): the holder's name as the bank
 * gives it (upper case without diacritics, partly masked with `*` by some banks), or that the bank
 * has no such account. Personal data: kept out of logs, failure messages and the transaction.
 */
export type BankAccountName = { found: true; name: string } | { found: false }

export interface BankAccountInquiryRail {
  /**
   * Ask the bank `institutionCode` (NAPAS BIN) whose account `bankAcctNum` is. A bank that cannot
   * answer raises a retryable `RailFailure`; "no such account" is an answer, not a failure.
   */
  accountName(input: { institutionCode: string; bankAcctNum: string }): Promise<BankAccountName>
}

/**
 * The reconciliation brake as the flows see it (src/reconcile/brake.ts implements it; the
 * container hands it to the flows, so no flow imports reconciliation). Every step that hands money
 * to a rail asks first: the worker's send of a Lightning payment, an on-chain broadcast, a TRON or
 * bank payout's submission, an operator's fee bump and approval.
 */
export interface SendsBrake {
  /** The rail, when the brake holds sends by it now; undefined otherwise, and always when it is off. */
  pausedFor(q: Queryable, rail: RailKind | null | undefined): Promise<RailKind | undefined>
  /** Refuse, with 503 `sends_paused`, a step that would let money leave by a paused rail. */
  refuseIfPaused(q: Queryable, rail: RailKind | null | undefined): Promise<void>
}

/** How long a send held by the brake waits before the worker looks at it again. */
export const PAUSED_RECHECK_MS = 60_000

/**
 * What sending USDT over Ethereum costs now, for a quote (issue 33): the EIP-1559 fee cap the
 * adapter would bid per gas and the gas a Tether transfer takes (its estimate with headroom).
 * Their product, in wei, is the network fee the quote converts to USDT.
 */
export interface EthFeeQuote {
  maxFeePerGasWei: bigint
  gasLimit: bigint
}

/** An Ethereum USDT payout's state, following replacements: `txHash` is the one that counts now. */
export type EthTransferState = PayoutState & {
  txHash?: string
  /** Wei the hot wallet paid for the mined transaction (gasUsed × effectiveGasPrice); final states only. */
  feeWei?: bigint
  /** Set while pending when the adapter cannot bring it further (fee cap reached, nonce gap it cannot fill). */
  stuck?: string
}

/**
 * USDT (ERC-20, Tether's contract, 6 decimals) paid out from the service's hot wallet on Ethereum.
 * A payout is known by its `requestId` from the first call on: the adapter may replace its
 * transaction (same nonce, higher fee) and the payout follows.
 */
export interface EthRail extends CheckableRail, ReservesRail, PaymentsRail {
  readonly name: string
  /** What a transfer costs now (quote time; nothing is sent). */
  feeQuote(): Promise<EthFeeQuote>
  /**
   * Send `amountMinor` to `to`, the whole transaction (and any replacement) costing at most
   * `maxFeeWei`. Checks first that it can succeed (balances, Tether's blacklist and pause, the gas
   * estimate) and fails final before spending gas when it cannot. Idempotent by `requestId`.
   */
  sendUsdt(input: {
    to: string
    amountMinor: bigint
    requestId: string
    maxFeeWei: bigint
  }): Promise<{ txHash: string }>
  /**
   * The payout's state, with `expected` (recipient and amount) checked against the token's
   * `Transfer` log. `completed` and `failed` only once final (the `finalized` block tag).
   */
  getTransfer(requestId: string, expected: { to: string; amountMinor: bigint }): Promise<EthTransferState>
}

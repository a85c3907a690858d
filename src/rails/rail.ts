/**
 * The rail interfaces: one small interface per payment network and direction. Each network has a
 * sandbox implementation (backed by our own database, producing real artefacts) and a real adapter
 * speaking the node's or partner's documented API. The worker drives them; only the worker
 * decides to retry, using `RailFailure.retryable`.
 */
import type { Network } from './network.js'

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

/** The four kinds of rail, as the reports and metrics name them. */
export type RailKind = 'lightning' | 'onchain' | 'tron' | 'bank'

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

export interface LightningRail extends CheckableRail {
  readonly name: string
  readonly network: Network
  /** Issue an invoice. `amountMsat` 0 is not used by the service: every receive has an amount. */
  createInvoice(input: {
    amountMsat: bigint
    description: string
    expirySeconds: number
  }): Promise<LightningInvoiceIssued>
  lookupInvoice(paymentHash: string): Promise<LightningInvoiceState>
  /**
   * Cancel an open invoice so that no outside payer can pay it any more. Used after an invoice was
   * settled inside the service, where the node never saw the payment. Cancelling an invoice that is
   * already cancelled succeeds.
   */
  cancelInvoice(paymentHash: string): Promise<void>
  /**
   * Start paying an invoice with a routing-fee limit. Idempotent by the invoice's payment hash: a
   * second call for a hash already in flight or paid reports that payment's state, never pays twice.
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
}

export interface OnchainRail extends CheckableRail {
  readonly name: string
  readonly network: Network
  /** Make the node watch an address we derived (import it); a no-op where not needed. */
  watchAddress(address: string): Promise<void>
  /** Every output paying `address`, confirmed or in the mempool. */
  listOutputs(address: string): Promise<OnchainOutput[]>
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
  getTransaction(txid: string): Promise<{ confirmations: number } | null>
}

export type PayoutState =
  | { status: 'pending' }
  | { status: 'completed' }
  | { status: 'failed'; reason: string }
  | { status: 'rejected'; reason: string }

export interface TronRail extends CheckableRail {
  readonly name: string
  /**
   * Transfer USDT (TRC-20, 6 decimals) from the service's hot wallet to `to`. Idempotent by
   * `requestId`.
   */
  sendUsdt(input: { to: string; amountMinor: bigint; requestId: string }): Promise<{ txHash: string }>
  getTransfer(txHash: string): Promise<PayoutState>
}

export interface BankBeneficiary {
  type: 'individual' | 'business'
  legalFullName: string
  countryCode: string
}

export interface BankPayoutRail extends CheckableRail {
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

export interface Rails {
  lightning: LightningRail
  onchain: OnchainRail
  tron: TronRail
  bank: BankPayoutRail
}

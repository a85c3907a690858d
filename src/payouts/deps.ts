import type { Db } from '../db/db.js'
import type { Config } from '../config/config.js'
import type { AccountsService } from '../accounts/service.js'
import type { RatesService } from '../rates/service.js'
import type { SystemPurpose } from '../ledger/ledger.js'
import type { BankPayoutRail, EthRail, PayoutState, RailKind, SendsBrake, TronRail } from '../rails/rail.js'
import type { Quote, QuoteContext } from '../transactions/flow.js'
import type { PayoutKind } from './kinds.js'
import type { TxnRepository } from '../transactions/repository.js'
import type { Txn } from '../transactions/txn.js'
import type { TransactionsService } from '../transactions/service.js'
import type { MoneyError } from '../transactions/errors.js'
import type { PayoutError } from './errors.js'

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
  /** The reconciliation brake, asked before a payout is handed to its rail. */
  brake: SendsBrake
  now?: () => number
}

export interface TronPayoutDeps extends PayoutFlowDeps {
  tron: TronRail
  /** How long to wait before asking the rail again about a transfer in flight. */
  pollMs: number
}

export interface EthPayoutDeps extends PayoutFlowDeps {
  eth: EthRail
  /** How long to wait before asking the rail again about a transfer in flight. */
  pollMs: number
}

export interface VndPayoutDeps extends PayoutFlowDeps {
  bank: BankPayoutRail
  /** How long to wait before asking the bank again about a payout in flight. */
  pollMs: number
}

/** What differs between the two payout networks; the lifecycle around it is shared. */
export interface PayoutNetwork {
  kind: PayoutKind
  /** The rail its money leaves by (the brake's, for a submission). */
  rail: RailKind
  /** The ledger's system account the paid-out money leaves through. */
  system: Extract<SystemPurpose, 'tron' | 'bank' | 'ethereum'>
  /** The name of the rail's reference in destReq.reqDetails. */
  refField: 'txHash' | 'bankRef'
  pollMs: number
  /** The `msg` of a payout the network refused at submission. */
  refusedReason: string
  quote(ctx: QuoteContext): Promise<Quote | MoneyError | PayoutError>
  /**
   * Hand the payout to the rail; idempotent by the transaction id. Answers the rail's reference, or
   * `{ rejected: msg }` when a check before sending refused the payout (nothing was sent).
   */
  submit(txn: Txn): Promise<string | { rejected: string }>
  /** The payout's state, and details to record with a final one (what the network charged). */
  check(ref: string, txn: Txn): Promise<PayoutState & { details?: Record<string, unknown> }>
}

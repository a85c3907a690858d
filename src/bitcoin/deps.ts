import type { Config } from '../config/config.js'
import type { Db, Queryable } from '../db/db.js'
import type { AccountsService } from '../accounts/service.js'
import type { RatesService } from '../rates/service.js'
import type { SendsBrake } from '../rails/rail.js'
import type { TxnRepository } from '../transactions/repository.js'
import type { TransactionsService } from '../transactions/service.js'
import type { LightningRail, OnchainRail } from '../rails/rail.js'
import type { BitcoinKeys } from './keys.js'

/**
 * What the Bitcoin flows, the deposit watcher and the sandbox endpoints are built from: the part
 * both rails share. What only the Lightning send needs (its LNURL client) is added to it in
 * src/lightning/deps.ts, so that this folder names neither rail's modules.
 */
export interface BitcoinDeps {
  db: Db
  config: Config
  accounts: AccountsService
  /** Rates, for a receive credited to a wallet in another currency than BTC. */
  rates: RatesService
  /**
   * The two rails, by their interfaces: the wiring's `BitcoinRails` (src/wiring/bitcoin-rails.ts),
   * which also carries the sandbox nodes, fits here without this folder naming the adapters.
   */
  rails: { lightning: LightningRail; onchain: OnchainRail }
  keys: BitcoinKeys
  /** The transactions service. It is built from the flows, so it is bound after them. */
  transactions(): TransactionsService
  /** The writes of transactions, built with the service's webhook variant and clock. */
  repository: TxnRepository
  /** The reconciliation brake, asked before money is handed to a rail (a send, a fee bump). */
  brake: SendsBrake
  /** When a confirm gate that held a send let it go (an operator's approval); undefined if none did. */
  releasedAt(q: Queryable, txnId: string): Promise<number | undefined>
  /** Screening of a deposit's sources (src/screening), given by the container; absent: none. */
  depositScreening?: DepositScreening
  now?: () => number
  log?: { error(obj: object, msg: string): void; warn(obj: object, msg: string): void }
}

/**
 * What the deposit watcher asks of screening: whether a new deposit's sources are on a deny list
 * (recorded with the deposit, in its transaction; true holds its credit), and whether a deposit's
 * credit still waits for an operator's release.
 */
export interface DepositScreening {
  screenDeposit(
    q: Queryable,
    deposit: { txnId: string; accountId: string; kind: string; sources: readonly string[] },
  ): Promise<boolean>
  depositHeld(q: Queryable, txnId: string): Promise<boolean>
}

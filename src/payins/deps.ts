import type { Db } from '../db/db.js'
import type { Config } from '../config/config.js'
import type { AccountsService } from '../accounts/service.js'
import type { RatesService } from '../rates/service.js'
import type { TxnRepository } from '../transactions/repository.js'
import type { TransactionsService } from '../transactions/service.js'
import type { VndReceiveConfig } from './config.js'

/** What the VND receive flow, the bank-credit sink and the assignment of credits are built from. */
export interface PayinDeps {
  db: Db
  config: Config
  vndReceive: VndReceiveConfig
  accounts: AccountsService
  /** Rates, for a receive credited to a BTC or USDT wallet. */
  rates: RatesService
  /** The writes of transactions, built with the service's webhook variant and clock. */
  repository: TxnRepository
  /** The transactions service; it is built from the flows, so it is bound after them. */
  transactions(): TransactionsService
  now?: () => number
}

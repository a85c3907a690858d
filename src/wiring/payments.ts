import type { Logger } from 'pino'
import type { AccountsService } from '../accounts/service.js'
import type { Config } from '../config/config.js'
import type { Db } from '../db/db.js'
import { vndReceiveConfig } from '../payins/config.js'
import { creditSink } from '../payins/credits.js'
import type { PayinDeps } from '../payins/deps.js'
import { vndReceiveFlow } from '../payins/receive.js'
import { createPayoutRails, type BankCreditsSource, type PayoutRails } from '../payouts/rails.js'
import { tronPayoutFlow } from '../payouts/tron-payout.js'
import { ethPayoutFlow } from '../payouts/eth-payout.js'
import { withCreditPollCheck } from '../payouts/vnd/bank-credit-poll.js'
import type { CreditSink } from '../payouts/vnd/bank-credit.js'
import { vndPayoutFlow } from '../payouts/vnd-payout.js'
import { observeRail } from '../rails/attempts.js'
import type { BankPayoutRail, CheckableRail, SendsBrake } from '../rails/rail.js'
import type { RatesService } from '../rates/service.js'
import type { Flow } from '../transactions/flow.js'
import type { TxnRepository } from '../transactions/repository.js'
import type { TransactionsService } from '../transactions/service.js'

/** What the payouts and the VND pay-in are wired from. */
export interface PaymentsWiringDeps {
  config: Config
  db: Db
  log: Logger
  accounts: AccountsService
  rates: RatesService
  repository: TxnRepository
  /** The reconciliation brake, asked before a payout is handed to its rail. */
  brake: SendsBrake
  /** The transactions service, reached lazily: it is built from the flows made here. */
  transactions: () => TransactionsService
  /** A sink of bank credits that replaces the pay-in's (a test of the transport alone). */
  creditSink?: CreditSink
}

export interface PaymentsWiring {
  /** The TRON and VND payouts, the VND receive and the Ethereum payout, in that order. */
  flows: Flow[]
  payins: PayinDeps
  payoutRails: PayoutRails
  /** The observed bank rail, which also answers the account inquiry. */
  bankRail: BankPayoutRail
  /** The bank rail as `svcpay rails check` asks it: with the statement poll's check when it polls. */
  bankChecked: CheckableRail
  bankCredits: (BankCreditsSource & { sink: CreditSink }) | undefined
}

/**
 * Payouts (TRON USDT, VND bank) and the VND pay-in over VietQR: their rails and flows, and where
 * incoming bank transfers go. The flows reach the transactions service lazily, for worker-side
 * transitions, because the service is built from this list of flows.
 */
export function wirePayments(deps: PaymentsWiringDeps): PaymentsWiring {
  const { config, db, log, accounts, rates, repository, brake, transactions } = deps
  const payoutRails = createPayoutRails(config, db)
  // Every rail the flows use is observed, so the worker knows what each one last answered.
  const tronRail = observeRail('tron', payoutRails.tron)
  const bankRail = observeRail('bank', payoutRails.bank)
  const payoutDeps = { config, rates, accounts, db, log, repository, brake, transactions }
  const flows: Flow[] = [
    tronPayoutFlow({ ...payoutDeps, tron: tronRail, pollMs: payoutRails.pollMs.tron }),
    vndPayoutFlow({ ...payoutDeps, bank: bankRail, pollMs: payoutRails.pollMs.bank }),
  ]
  const payins: PayinDeps = {
    db,
    config,
    vndReceive: vndReceiveConfig(config),
    accounts,
    rates,
    repository,
    transactions,
  }
  flows.push(vndReceiveFlow(payins))
  // USDT over Ethereum (issue 33).
  const ethRail = observeRail('ethereum', payoutRails.eth)
  flows.push(ethPayoutFlow({ ...payoutDeps, eth: ethRail, pollMs: payoutRails.pollMs.eth }))
  // Incoming bank transfers go to the VND pay-in's sink (a test of the transport alone may pass its own).
  const bankCredits = payoutRails.bankCredits
    ? { ...payoutRails.bankCredits, sink: deps.creditSink ?? creditSink(payins) }
    : undefined
  const bankChecked = bankCredits?.pollMs ? withCreditPollCheck(payoutRails.bank, db) : payoutRails.bank
  return { flows, payins, payoutRails, bankRail, bankChecked, bankCredits }
}

import type { Logger } from 'pino'
import type { AccountsService } from '../accounts/service.js'
import { loadBitcoinKeys } from '../bitcoin/keys.js'
import type { Config } from '../config/config.js'
import type { Db } from '../db/db.js'
import { createLnurlDeps, invoiceFor, payRequestFor, type LnurlDeps } from '../lightning/address/lnurl.js'
import { LNURL_CLIENT_DEFAULTS, type LnurlClientOptions } from '../lightning/lnurl-client.js'
import type { LocalLnurl } from '../lightning/send-destination.js'
import type { BitcoinDeps } from '../bitcoin/deps.js'
import { observeRail } from '../rails/attempts.js'
import type { RatesService } from '../rates/service.js'
import type { SecretBox } from '../shared/secret-box.js'
import type { Flow } from '../transactions/flow.js'
import type { TxnRepository } from '../transactions/repository.js'
import type { TransactionsService } from '../transactions/service.js'
import { bitcoinFlows, type BitcoinFlowDeps } from './bitcoin-flows.js'
import { createRails, type BitcoinRails } from './bitcoin-rails.js'

/** What the Bitcoin flows are wired from. */
export interface BitcoinWiringDeps {
  config: Config
  db: Db
  box: SecretBox
  log: Logger
  accounts: AccountsService
  rates: RatesService
  repository: TxnRepository
  brake: BitcoinDeps['brake']
  releasedAt: BitcoinDeps['releasedAt']
  /** Screening of deposits' sources (src/screening); absent: deposits are not screened. */
  depositScreening?: BitcoinDeps['depositScreening']
  /** The transactions service, reached lazily: it is built from the flows made here. */
  transactions: () => TransactionsService
  /** Widens the LNURL client's reach (tests only, never the environment). */
  lnurlClient?: Partial<LnurlClientOptions>
}

export interface BitcoinWiring {
  bitcoin: BitcoinFlowDeps
  /** The rails as configured, unobserved: `svcpay rails check` and reconciliation ask them. */
  rails: BitcoinRails
  lightningAddresses: LnurlDeps
  flows: Flow[]
}

/**
 * Bitcoin (Lightning and on-chain): keys kept sealed in the database, rails chosen by config, and
 * the flows, which reach the transactions service lazily like the payouts.
 */
export async function wireBitcoin(deps: BitcoinWiringDeps): Promise<BitcoinWiring> {
  const { config, db, box, log, accounts, rates, repository, brake, releasedAt, transactions } = deps
  // A send to an address of this service asks the address's LNURL-pay directly, without HTTP.
  const lightningAddresses = createLnurlDeps({ db, config, transactions })
  const localAddresses: LocalLnurl = {
    payRequestFor: (username) => payRequestFor(lightningAddresses, username),
    invoiceFor: (username, amountMsat, comment, forSend) =>
      invoiceFor(lightningAddresses, username, amountMsat, comment, forSend),
  }
  const keys = await loadBitcoinKeys(db, box, config.network, {
    accountXpub: config.env.ONCHAIN_XPUB || undefined,
  })
  const rails = createRails(config, db, keys)
  const bitcoin: BitcoinFlowDeps = {
    db,
    config,
    accounts,
    rates,
    rails: {
      ...rails,
      lightning: observeRail('lightning', rails.lightning),
      onchain: observeRail('onchain', rails.onchain),
    },
    keys,
    repository,
    brake,
    releasedAt,
    ...(deps.depositScreening ? { depositScreening: deps.depositScreening } : {}),
    transactions,
    // Sends to a Lightning Address or LNURL: https to public addresses only (tests may widen it
    // through `lnurlClient`, never the environment). Addresses of this service answer without HTTP.
    lnurl: { client: { ...LNURL_CLIENT_DEFAULTS, ...deps.lnurlClient }, local: localAddresses },
    log,
  }
  return { bitcoin, rails, lightningAddresses, flows: bitcoinFlows(bitcoin) }
}

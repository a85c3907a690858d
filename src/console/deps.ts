import type { AccountsService } from '../accounts/service.js'
import type { ApprovalsService } from '../approvals/service.js'
import type { AuthService } from '../auth/service.js'
import type { Config } from '../config/config.js'
import type { Db } from '../db/db.js'
import type { WebhooksService } from '../events/service.js'
import type { OperatorsConfig, OperatorsService } from '../operators/service.js'
import type { PayinDeps } from '../payins/deps.js'
import type { Reconciler } from '../reconcile/service.js'
import type { KindRegistry } from '../transactions/kinds.js'
import type { SecretBox } from '../shared/secret-box.js'
import type { ScreeningService } from '../screening/service.js'

/**
 * What the console pages are built from: the slice of the container they use. The container
 * (src/container.ts) satisfies it as it is, so the console, a floor below the assembly, names only
 * the services it reads and never the container itself.
 */
export interface ConsoleDeps {
  config: Config
  db: Db
  auth: AuthService
  accounts: AccountsService
  /** Every kind of transaction, for the pages' filters and labels. */
  kinds: KindRegistry
  approvals: ApprovalsService
  /** What the VND pay-in's credit assignment needs (src/payins). */
  payins: PayinDeps
  webhooks: WebhooksService
  operators: OperatorsService
  operatorsConfig: OperatorsConfig
  reconcile: Reconciler
  /** The master keyring, for the keys block's counts by key id (src/console/keys.ts). */
  box: SecretBox
  /** Screening's lists and hits (src/screening). */
  screening: ScreeningService
}

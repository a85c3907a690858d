import type { FastifyInstance } from 'fastify'
import type { ConsoleDeps } from './deps.js'
import { installConsoleErrors } from './errors.js'
import { installFormBody } from './form-body.js'
import { installFlashes } from './result-pages.js'
import { signInRoutes } from './sign-in.js'
import { setupPages } from './setup.js'
import { overviewPage } from './overview.js'
import { accountPages } from './accounts.js'
import { accountActions } from './account-actions.js'
import { approvalPages } from './approvals.js'
import { bankCreditPages } from './bank-credits.js'
import { transactionListPage } from './transactions.js'
import { transactionPage } from './transaction.js'
import { transactionActions } from './transaction-actions.js'
import { auditLogPage } from './audit-log.js'
import { operatorPages } from './operators.js'
import { reconciliationPages } from './reconciliation.js'
import { exportsPage } from './exports.js'
import { screeningPages } from './screening.js'

/**
 * The operator console (docs/console.md): server-rendered pages under /admin/console, behind the
 * same guard, permission table and audit trail as the rest of the operator API. Each page lives in
 * its own file and is declared here.
 */
export async function consoleRoutes(app: FastifyInstance, c: ConsoleDeps): Promise<void> {
  await app.register(async (scope) => {
    installFormBody(scope)
    installConsoleErrors(scope)
    installFlashes(scope, c.db)
    signInRoutes(scope, { operators: c.operators, sessionMaxMs: c.operatorsConfig.sessionMaxMs })
    setupPages(scope, { operators: c.operators })
    overviewPage(scope, c)
    accountPages(scope, c)
    accountActions(scope, c)
    approvalPages(scope, c)
    bankCreditPages(scope, c)
    transactionListPage(scope, c)
    transactionPage(scope, c)
    transactionActions(scope, c)
    auditLogPage(scope, c)
    operatorPages(scope, c)
    reconciliationPages(scope, c)
    exportsPage(scope)
    screeningPages(scope, c)
  })
}

import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { lockAccount } from '../accounts/reads.js'
import type { Queryable } from '../db/db.js'
import { sql } from '../db/sql.js'
import { paramsOf } from '../http/request-fields.js'

/**
 * Who may do what in the operator API. Roles are sets of permissions; ADMIN_ROUTES is the one table
 * that names, for every route under /admin, the permission it needs. A route missing from the table
 * is refused to everyone (src/operators/guard.ts), and test/admin/access.test.ts fails until it is added.
 */
export const PERMISSIONS = [
  'accounts.read',
  'accounts.write',
  'accounts.tier',
  'keys.write',
  'ledger.read',
  'webhooks.read',
  'webhooks.redeliver',
  'transactions.read',
  'transactions.write',
  'rails.read',
  'audit.read',
  'operators.read',
  'operators.manage',
  'sandbox.control',
  'approvals.decide',
  'exports.read',
  // Key rotation (issue 32): reading what each key seals, and rotating the keys.
  'keys.read',
  'keys.rotate',
] as const
export type Permission = (typeof PERMISSIONS)[number]

export const ROLES = ['viewer', 'support', 'finance', 'compliance', 'admin'] as const
export type Role = (typeof ROLES)[number]

const VIEWER: Permission[] = [
  'accounts.read',
  'ledger.read',
  'webhooks.read',
  'transactions.read',
  'rails.read',
]

export const ROLE_PERMISSIONS: Record<Role, ReadonlySet<Permission>> = {
  viewer: new Set(VIEWER),
  // Support answers customers: it replays webhook deliveries and replaces a leaked API key.
  support: new Set([...VIEWER, 'webhooks.redeliver', 'keys.write']),
  // Finance acts on money in flight and on an account's commercial terms.
  finance: new Set([...VIEWER, 'accounts.tier', 'transactions.write', 'approvals.decide', 'exports.read']),
  // Compliance reads everything, including who did what and who may do it.
  compliance: new Set([...VIEWER, 'audit.read', 'operators.read', 'exports.read', 'keys.read']),
  admin: new Set(PERMISSIONS),
}

/**
 * What a route needs: a permission; `signed-in` (any operator, for its own session); or `public`
 * (sign-in and set-up, whose request body is the credential). `audit` says how a state change is
 * recorded: `wrapped` (the default) runs the handler in one database transaction that ends with the
 * audit row; `self` means the handler writes its own rows (sign-in must keep a failed attempt's
 * count even though the request fails); `after` writes the row once the handler succeeded, for
 * sandbox controls that wait on work in other connections and so cannot run inside one transaction.
 */
export interface RouteAccess {
  need: Permission | 'signed-in' | 'public'
  audit?: 'wrapped' | 'self' | 'after'
  /** The audit row's action name (default: the route key). */
  action?: string
  /** Reads the state a wrapped change starts from, in its transaction, for the audit row's `before`. */
  before?: (q: Queryable, request: FastifyRequest) => Promise<unknown>
}

const SANDBOX: RouteAccess = { need: 'sandbox.control', audit: 'after' }

/** Keyed by `METHOD url` exactly as the route was declared (HEAD follows its GET). */
export const ADMIN_ROUTES: Record<string, RouteAccess> = {
  // Sessions and set-up (src/operators/routes.ts)
  'POST /admin/session': { need: 'public', audit: 'self' },
  'GET /admin/session': { need: 'signed-in' },
  'DELETE /admin/session': { need: 'signed-in' },
  'POST /admin/sessions/revoke-all': { need: 'signed-in' },
  'POST /admin/setup/begin': { need: 'public', audit: 'self' },
  'POST /admin/setup/finish': { need: 'public', audit: 'self' },
  // Operators (src/operators/routes.ts)
  'GET /admin/operators': { need: 'operators.read' },
  'POST /admin/operators': { need: 'operators.manage' },
  'POST /admin/operators/:operatorId/disable': { need: 'operators.manage' },
  'POST /admin/operators/:operatorId/role': { need: 'operators.manage', action: 'operator.role' },
  'POST /admin/operators/:operatorId/enable': { need: 'operators.manage', action: 'operator.enable' },
  'POST /admin/operators/:operatorId/reset': { need: 'operators.manage', action: 'operator.reset' },
  // Audit (src/admin/audit-routes.ts)
  'GET /admin/audit': { need: 'audit.read' },
  'GET /admin/audit.csv': { need: 'audit.read' },
  // Accounts and keys (src/admin/routes.ts)
  'POST /admin/accounts': { need: 'accounts.write', action: 'account.create' },
  'GET /admin/accounts': { need: 'accounts.read' },
  'PUT /admin/accounts/:accountId/tier': {
    need: 'accounts.tier',
    action: 'account.tier',
    before: async (q, request) => {
      const row = await lockAccount(q, paramsOf(request, Type.Object({ accountId: Type.String() })).accountId)
      return row ? { tier: row.tier } : null
    },
  },
  // Limits (src/limits/routes.ts, docs/limits.md): finance sets an account's tier, overrides and
  // allow-list, each audited with its reason.
  'GET /admin/accounts/:accountId/limits': { need: 'accounts.read' },
  'PUT /admin/accounts/:accountId/limits': { need: 'accounts.tier', action: 'limits.account' },
  'PUT /admin/accounts/:accountId/limits/overrides': { need: 'accounts.tier', action: 'limits.override' },
  'DELETE /admin/accounts/:accountId/limits/overrides': {
    need: 'accounts.tier',
    action: 'limits.override.remove',
  },
  'POST /admin/accounts/:accountId/limits/allow-list': { need: 'accounts.tier', action: 'limits.allow' },
  'DELETE /admin/accounts/:accountId/limits/allow-list': {
    need: 'accounts.tier',
    action: 'limits.allow.remove',
  },
  'POST /admin/keys': { need: 'keys.write', action: 'key.create' },
  'POST /admin/keys/:apiKey/revoke': {
    need: 'keys.write',
    action: 'key.revoke',
    before: async (q, request) => {
      const { apiKey } = paramsOf(request, Type.Object({ apiKey: Type.String() }))
      const { rows } = await q.query(
        sql`SELECT account_id, revoked_at FROM api_keys WHERE id = ${apiKey} FOR UPDATE`,
      )
      return rows[0]
        ? {
            accountId: rows[0].account_id,
            revokedAt: rows[0].revoked_at === null ? null : Number(rows[0].revoked_at),
          }
        : null
    },
  },
  'GET /admin/ledger/check': { need: 'ledger.read' },
  // Key rotation (src/admin/keys.ts): the reseal writes its own audit rows (start, finish).
  'GET /admin/key-rotation': { need: 'keys.read' },
  'POST /admin/key-rotation/master': { need: 'keys.rotate', audit: 'self', action: 'keys.rotate_master' },
  'POST /admin/key-rotation/jwt': { need: 'keys.rotate', action: 'keys.rotate_jwt' },
  // Rails (src/admin/routes.ts, src/onchain/admin-routes.ts)
  'GET /admin/rails': { need: 'rails.read' },
  'GET /admin/transactions/stuck': { need: 'transactions.read' },
  'GET /admin/onchain/reorgs': { need: 'transactions.read' },
  // Reconciliation (src/reconcile/routes.ts)
  'GET /admin/reconciliation': { need: 'ledger.read' },
  // A run that counts towards the brake (it can pause sends): finance and admin, audited by the
  // route itself in the transaction that records the readings.
  'POST /admin/reconciliation/run': {
    need: 'transactions.write',
    audit: 'self',
    action: 'reconciliation.record',
  },
  // Backup and recovery after a restore (src/admin/backup-routes.ts). A backup holds every account's
  // data: admin only. It streams the archive, so it is audited once it was sent; a recovery check
  // waits on the rails, audited once it ran.
  'POST /admin/backup': { need: 'operators.manage', audit: 'after', action: 'backup.create' },
  'GET /admin/recovery': { need: 'transactions.read' },
  'POST /admin/recovery/begin': { need: 'transactions.write', action: 'recovery.begin' },
  'POST /admin/recovery/check': { need: 'transactions.write', audit: 'after', action: 'recovery.check' },
  'POST /admin/recovery/end': { need: 'transactions.write', action: 'recovery.end' },
  // A fee bump asks the node before it writes: audited once it succeeded, outside one transaction.
  'POST /admin/onchain/sends/:txnId/bumpfee': {
    need: 'transactions.write',
    action: 'onchain.bumpfee',
    audit: 'after',
  },
  // Webhook deliveries (src/events/routes.ts)
  'GET /admin/webhook/deliveries': { need: 'webhooks.read' },
  'POST /admin/webhook/deliveries/:deliveryId/redeliver': {
    need: 'webhooks.redeliver',
    action: 'webhook.redeliver',
  },
  // Sandbox controls (src/sandbox/fund.ts, src/sandbox/bitcoin-routes.ts), with RAILS=sandbox only
  'POST /admin/sandbox/fund': SANDBOX,
  'POST /admin/sandbox/lightning/pay': SANDBOX,
  'POST /admin/sandbox/lightning/invoice': SANDBOX,
  'POST /admin/sandbox/onchain/send': SANDBOX,
  'POST /admin/sandbox/onchain/mine': SANDBOX,
  'POST /admin/sandbox/vnd/transfer': SANDBOX,
  // Bank transfers in (src/payins/routes.ts): those in suspense are read like transactions; assigning
  // one to an account moves money, as finance does.
  'GET /admin/bank-credits': { need: 'transactions.read' },
  'POST /admin/bank-credits/:creditId/assign': { need: 'transactions.write', action: 'bank_credit.assign' },
  // Drift made on purpose, for reconciliation to find (src/reconcile/drift-routes.ts)
  'POST /admin/sandbox/drift/move': SANDBOX,
  'POST /admin/sandbox/drift/pay-invoice': SANDBOX,
  'POST /admin/sandbox/drift/duplicate-deposit': SANDBOX,
  // Operator capital (src/reconcile/capital-routes.ts): money the operator itself put on a rail or took off
  'POST /admin/capital': { need: 'transactions.write', action: 'capital.book' },
  'GET /admin/capital': { need: 'ledger.read' },
  // Four-eyes approval of large sends (src/approvals/routes.ts): reading the queue is reading
  // transactions; a review, an approval or a rejection needs approvals.decide.
  'GET /admin/approvals': { need: 'transactions.read' },
  'POST /admin/approvals/:txnId/review': { need: 'approvals.decide', action: 'approval.review' },
  'POST /admin/approvals/:txnId/approve': { need: 'approvals.decide', action: 'approval.approve' },
  'POST /admin/approvals/:txnId/reject': { need: 'approvals.decide', action: 'approval.reject' },
  // Screening (src/screening/routes.ts): its lists and hits are read like transactions; loading or
  // removing a list, reviewing a hit or releasing a held deposit needs approvals.decide.
  'GET /admin/screening/lists': { need: 'transactions.read' },
  'PUT /admin/screening/lists/:source': { need: 'approvals.decide', action: 'screening.list_load' },
  'DELETE /admin/screening/lists/:source': { need: 'approvals.decide', action: 'screening.list_clear' },
  'GET /admin/screening/hits': { need: 'transactions.read' },
  'POST /admin/screening/hits/:hitId/review': { need: 'approvals.decide', action: 'screening.hit_review' },
  'POST /admin/screening/hits/:hitId/release': {
    need: 'approvals.decide',
    action: 'screening.deposit_release',
  },
  'GET /admin/console/screening': { need: 'transactions.read' },
  'POST /admin/console/screening/hits/:hitId/review': {
    need: 'approvals.decide',
    action: 'screening.hit_review',
  },
  'POST /admin/console/screening/hits/:hitId/release': {
    need: 'approvals.decide',
    action: 'screening.deposit_release',
  },
  // The operator console's pages (src/console/); its form posts are audited like the API's changes.
  'GET /admin/console/sign-in': { need: 'public' },
  'POST /admin/console/sign-in': { need: 'public', audit: 'self' },
  'POST /admin/console/sign-out': { need: 'signed-in' },
  'POST /admin/console/sign-out-everywhere': { need: 'signed-in' },
  // A form's result page, once (Post/Redirect/Get), and the page a sign-out leads to (flash.ts).
  'GET /admin/console/done/:flashId': { need: 'signed-in' },
  'GET /admin/console/signed-out': { need: 'public' },
  // An operator's own set-up (src/console/setup.ts): the set-up secret is the credential.
  'GET /admin/console/setup': { need: 'public' },
  'POST /admin/console/setup': { need: 'public', audit: 'self' },
  'GET /admin/console/setup/enrol/:flashId': { need: 'public' },
  'POST /admin/console/setup/finish': { need: 'public', audit: 'self' },
  'GET /admin/console/setup/done': { need: 'public' },
  'GET /admin/console': { need: 'transactions.read' },
  'GET /admin/console/accounts': { need: 'accounts.read' },
  'GET /admin/console/accounts/:accountId': { need: 'accounts.read' },
  'POST /admin/console/accounts/:accountId/keys': { need: 'keys.write', action: 'key.create' },
  'POST /admin/console/accounts/:accountId/keys/:apiKey/revoke': { need: 'keys.write', action: 'key.revoke' },
  'POST /admin/console/accounts/:accountId/tier': { need: 'accounts.tier', action: 'account.tier' },
  // The approvals queue page and its forms (src/console/approvals.ts).
  'GET /admin/console/approvals': { need: 'transactions.read' },
  'POST /admin/console/approvals/:txnId/review': { need: 'approvals.decide', action: 'approval.review' },
  'POST /admin/console/approvals/:txnId/approve': { need: 'approvals.decide', action: 'approval.approve' },
  'POST /admin/console/approvals/:txnId/reject': { need: 'approvals.decide', action: 'approval.reject' },
  // Bank transfers in waiting in suspense, and the form that assigns one (src/console/bank-credits.ts).
  'GET /admin/console/bank-credits': { need: 'transactions.read' },
  'POST /admin/console/bank-credits/:creditId/assign': {
    need: 'transactions.write',
    action: 'bank_credit.assign',
  },
  'GET /admin/console/transactions': { need: 'transactions.read' },
  'GET /admin/console/transactions/:txnId': { need: 'transactions.read' },
  'POST /admin/console/transactions/:txnId/deliveries/:deliveryId/redeliver': {
    need: 'webhooks.redeliver',
    action: 'webhook.redeliver',
  },
  // The console's audit, operators, reconciliation and exports pages (src/console/audit-log.ts,
  // operators.ts, reconciliation.ts, exports.ts). A reconciliation waits on the rails: audited after.
  'GET /admin/console/audit': { need: 'audit.read' },
  'GET /admin/console/operators': { need: 'operators.manage' },
  'POST /admin/console/operators': { need: 'operators.manage', action: 'operator.create' },
  'POST /admin/console/operators/:operatorId/disable': {
    need: 'operators.manage',
    action: 'operator.disable',
  },
  'POST /admin/console/operators/:operatorId/enable': { need: 'operators.manage', action: 'operator.enable' },
  'POST /admin/console/operators/:operatorId/role': { need: 'operators.manage', action: 'operator.role' },
  'POST /admin/console/operators/:operatorId/reset': { need: 'operators.manage', action: 'operator.reset' },
  'GET /admin/console/reconciliation': { need: 'ledger.read' },
  'POST /admin/console/reconciliation/run': {
    need: 'ledger.read',
    action: 'reconciliation.run',
    audit: 'after',
  },
  'GET /admin/console/exports': { need: 'exports.read' },
  // Exports for accountants (src/exports/routes.ts): reads, each written to the audit trail by the
  // route itself before the first row leaves.
  'GET /admin/exports/transactions.csv': { need: 'exports.read', action: 'export.transactions' },
  'GET /admin/exports/ledger-entries.csv': { need: 'exports.read', action: 'export.ledger-entries' },
}

export function routeKey(method: string, url: string): string {
  return `${method === 'HEAD' ? 'GET' : method} ${url}`
}

export function roleAllows(role: Role, need: RouteAccess['need']): boolean {
  if (need === 'public' || need === 'signed-in') return true
  return ROLE_PERMISSIONS[role].has(need)
}

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value)
}

/** Methods that change state: they need a CSRF token with a cookie session, and are audited. */
export function isStateChanging(method: string): boolean {
  return !['GET', 'HEAD', 'OPTIONS'].includes(method)
}

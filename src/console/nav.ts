import { ADMIN_ROUTES, roleAllows, type Role } from '../operators/permissions.js'
import type { ShellStrings } from './strings.js'

/**
 * The console's sections, in the order the navigation shows them. A section appears only when its
 * page is in ADMIN_ROUTES (pages arrive in later work) and the operator's role may open it: the
 * permission table decides, as it does for the request itself.
 */
export const CONSOLE_BASE = '/admin/console'

export type Section =
  | 'overview'
  | 'accounts'
  | 'transactions'
  | 'approvals'
  | 'reconciliation'
  | 'audit'
  | 'operators'
  | 'exports'
  | 'screening'

interface NavItem {
  section: Section
  href: string
  label: (t: ShellStrings) => string
}

export const NAV: readonly NavItem[] = [
  { section: 'overview', href: CONSOLE_BASE, label: (t) => t.navOverview },
  { section: 'accounts', href: `${CONSOLE_BASE}/accounts`, label: (t) => t.navAccounts },
  { section: 'transactions', href: `${CONSOLE_BASE}/transactions`, label: (t) => t.navTransactions },
  { section: 'approvals', href: `${CONSOLE_BASE}/approvals`, label: (t) => t.navApprovals },
  { section: 'reconciliation', href: `${CONSOLE_BASE}/reconciliation`, label: (t) => t.navReconciliation },
  { section: 'audit', href: `${CONSOLE_BASE}/audit`, label: (t) => t.navAudit },
  { section: 'operators', href: `${CONSOLE_BASE}/operators`, label: (t) => t.navOperators },
  { section: 'exports', href: `${CONSOLE_BASE}/exports`, label: (t) => t.navExports },
  { section: 'screening', href: `${CONSOLE_BASE}/screening`, label: (t) => t.navScreening },
]

/** May this role open this page? False for a page that is not in the permission table. */
export function mayOpen(role: Role, path: string): boolean {
  const access = ADMIN_ROUTES[`GET ${path}`]
  return access !== undefined && access.need !== 'public' && roleAllows(role, access.need)
}

/** The sections this role sees in the navigation. */
export function visibleNav(role: Role): readonly NavItem[] {
  return NAV.filter((item) => mayOpen(role, item.href))
}

import { ConfigError } from '../config/config.js'

export interface OperatorsConfig {
  sessionIdleMs: number
  sessionMaxMs: number
  setupTtlMs: number
  /** Failed sign-ins before the first lock, the first lock's length, and the longest lock. */
  lockAfterFailures: number
  lockBaseMs: number
  lockMaxMs: number
  /**
   * ADMIN_TOKEN_ROUTES (issue 32): where the shared admin token is accepted. `setup`: only to set
   * up operators (create, list, reset: ADMIN_TOKEN_SETUP_ROUTES), everything else needs an
   * operator's own credentials; `all`: every route, as the operator `system`. Default `setup` with
   * RAILS=real, `all` with the sandbox rails (whose quickstart runs on the command line).
   */
  adminTokenRoutes: 'all' | 'setup'
}

export function operatorsConfigFromEnv(env: Record<string, string | undefined>): OperatorsConfig {
  const seconds = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name]
    if (raw === undefined || raw === '') return fallback * 1000
    const n = Number(raw)
    if (!Number.isInteger(n) || n < min || n > max)
      throw new ConfigError(`${name}: expected a whole number of seconds from ${min} to ${max}, got "${raw}"`)
    return n * 1000
  }
  return {
    sessionIdleMs: seconds('ADMIN_SESSION_IDLE_S', 30 * 60, 60, 24 * 3600),
    sessionMaxMs: seconds('ADMIN_SESSION_MAX_S', 12 * 3600, 300, 7 * 24 * 3600),
    setupTtlMs: seconds('OPERATOR_SETUP_TTL_S', 24 * 3600, 300, 7 * 24 * 3600),
    lockAfterFailures: 5,
    lockBaseMs: 30_000,
    lockMaxMs: 3600_000,
    adminTokenRoutes: adminTokenRoutes(env),
  }
}

function adminTokenRoutes(env: Record<string, string | undefined>): 'all' | 'setup' {
  const raw = env.ADMIN_TOKEN_ROUTES
  if (raw === undefined || raw === '') return env.RAILS === 'real' ? 'setup' : 'all'
  if (raw !== 'all' && raw !== 'setup')
    throw new ConfigError(`ADMIN_TOKEN_ROUTES: expected all or setup, got "${raw}"`)
  return raw
}

/** How long an operator is locked out after `failures` failed sign-ins in a row (0: not locked). */
export function lockoutMs(failures: number, config: OperatorsConfig): number {
  if (failures < config.lockAfterFailures) return 0
  const doublings = Math.min(failures - config.lockAfterFailures, 20)
  return Math.min(config.lockBaseMs * 2 ** doublings, config.lockMaxMs)
}

import type { Db } from '../db/db.js'
import type { SecretBox } from '../shared/secret-box.js'
import type { Role } from './permissions.js'
import type { OperatorsConfig } from './config.js'
import type { Actor, Operator, OperatorsDeps, RequestContext, SignedIn } from './operator.js'
import { create, disable, enable, get, list, reset, setRole } from './manage.js'
import { setupBegin, setupFinish } from './setup.js'
import { signIn } from './sign-in.js'
import { revokeAll, session, signOut } from './sessions.js'

export { operatorsConfigFromEnv, lockoutMs, type OperatorsConfig } from './config.js'
export {
  csrfTokenFor,
  sameSecret,
  sha256,
  SYSTEM_OPERATOR_ID,
  type Actor,
  type Operator,
  type RequestContext,
  type SignedIn,
} from './operator.js'

export interface OperatorsService {
  create(input: {
    email: string
    role: Role
  }): Promise<{ operator: Operator; setupSecret: string; setupExpiresAt: number }>
  list(): Promise<Operator[]>
  get(operatorId: string): Promise<Operator | undefined>
  setupBegin(
    setupSecret: string,
    ctx: RequestContext,
  ): Promise<{ operatorId: string; email: string; totpSecret: string; otpauthUri: string }>
  setupFinish(
    input: { setupSecret: string; password: string; code: string },
    ctx: RequestContext,
  ): Promise<Operator>
  signIn(input: { email: string; password: string; code: string }, ctx: RequestContext): Promise<SignedIn>
  /** The actor of a live session cookie, or undefined; a use moves the idle time-out on. */
  session(sessionToken: string): Promise<Actor | undefined>
  signOut(sessionHash: string): Promise<boolean>
  /** Ends every session of an operator; returns how many were live. */
  revokeAll(operatorId: string): Promise<number>
  disable(operatorId: string): Promise<{ before: Operator; after: Operator } | undefined>
  /** A new role, in force from the operator's next request; the last active admin keeps its role. */
  setRole(operatorId: string, role: Role): Promise<{ before: Operator; after: Operator } | undefined>
  /** A disabled operator back: active if it had finished its set-up, else pending (reset it then). */
  enable(operatorId: string): Promise<{ before: Operator; after: Operator } | undefined>
  /**
   * Forgets an active or pending operator's password and second factor, ends its sessions and
   * issues a new set-up secret: the operator sets both up again, as a new one does.
   */
  reset(
    operatorId: string,
  ): Promise<{ before: Operator; after: Operator; setupSecret: string; setupExpiresAt: number } | undefined>
}

/**
 * Named operators: set-up (setup.ts), sign-in with password and TOTP and its lockout (sign-in.ts,
 * lockout.ts), sessions (sessions.ts), and the team's changes to them (manage.ts). Each operation
 * is a module-level function over one deps object; this only fills in the clock.
 */
export function createOperatorsService(options: {
  db: Db
  box: SecretBox
  config: OperatorsConfig
  now?: () => number
}): OperatorsService {
  const deps: OperatorsDeps = {
    db: options.db,
    box: options.box,
    config: options.config,
    now: options.now ?? Date.now,
  }
  return {
    create: (input) => create(deps, input),
    list: () => list(deps),
    get: (operatorId) => get(deps, operatorId),
    setupBegin: (setupSecret, ctx) => setupBegin(deps, setupSecret, ctx),
    setupFinish: (input, ctx) => setupFinish(deps, input, ctx),
    signIn: (input, ctx) => signIn(deps, input, ctx),
    session: (sessionToken) => session(deps, sessionToken),
    signOut: (sessionHash) => signOut(deps, sessionHash),
    revokeAll: (operatorId) => revokeAll(deps, operatorId),
    disable: (operatorId) => disable(deps, operatorId),
    setRole: (operatorId, role) => setRole(deps, operatorId, role),
    enable: (operatorId) => enable(deps, operatorId),
    reset: (operatorId) => reset(deps, operatorId),
  }
}

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { AccountsService } from '../accounts/service.js'
import type { AuthService } from '../auth/service.js'
import { bearerAuth, principalOf } from '../auth/hook.js'
import { decimalMinor, LIMIT_NAMES, type LimitName, type LimitsConfig } from '../config/limits.js'
import type { Db, Queryable } from '../db/db.js'
import { BEARER, errors } from '../http/schemas.js'
import { auditNote } from '../operators/guard.js'
import { formatMinor } from '../shared/amount.js'
import { ApiError } from '../shared/errors.js'
import { normaliseDestination } from './destinations.js'
import { effectiveLimits } from './engine.js'
import {
  addAllowed,
  allowList,
  DAY_MS,
  deleteOverride,
  HOUR_MS,
  MONTH_MS,
  removeAllowed,
  windowUse,
  writeAccountSettings,
  writeOverride,
  type MethodUse,
} from './repository.js'

const ALLOW_LIST_SHOWN = 200

export interface LimitsRoutesDeps {
  db: Db
  accounts: AccountsService
  auth: AuthService
  config: { limits: LimitsConfig }
}

const isCount = (name: string) => name === 'sends_per_hour' || name === 'new_destination_cooldown'

/** An account's limits, what it used of each window and its overrides, as GET /limits shows them. */
export async function accountLimitsView(q: Queryable, config: LimitsConfig, accountId: string, at: number) {
  const limits = await effectiveLimits(q, config, accountId, at)
  const [out, inc] = await Promise.all([
    windowUse(q, { accountId, direction: 'out', refCcy: config.ccy, at }),
    windowUse(q, { accountId, direction: 'in', refCcy: config.ccy, at }),
  ])
  const ccy = config.ccy
  const sum = (rows: MethodUse[], pick: 'day' | 'month') => rows.reduce((s, r) => s + r[pick], 0n)
  const oldest = (rows: MethodUse[], pick: 'dayOldest' | 'monthOldest' | 'hourOldest') => {
    const xs = rows.map((r) => r[pick]).filter((v): v is number => v !== null)
    return xs.length ? Math.min(...xs) : null
  }
  const show = (set: Partial<Record<LimitName, bigint>>, method: string | null) => {
    const rowsOut = method ? out.filter((r) => r.method === method) : out
    const rowsIn = method ? inc.filter((r) => r.method === method) : inc
    const entry = (name: LimitName) => {
      const limit = set[name]
      if (limit === undefined) return []
      const used =
        name === 'daily_outgoing'
          ? { used: sum(rowsOut, 'day'), from: oldest(rowsOut, 'dayOldest'), ms: DAY_MS }
          : name === 'monthly_outgoing'
            ? { used: sum(rowsOut, 'month'), from: oldest(rowsOut, 'monthOldest'), ms: MONTH_MS }
            : name === 'daily_incoming'
              ? { used: sum(rowsIn, 'day'), from: oldest(rowsIn, 'dayOldest'), ms: DAY_MS }
              : name === 'monthly_incoming'
                ? { used: sum(rowsIn, 'month'), from: oldest(rowsIn, 'monthOldest'), ms: MONTH_MS }
                : name === 'sends_per_hour'
                  ? {
                      used: BigInt(rowsOut.reduce((s, r) => s + r.hourCount, 0)),
                      from: oldest(rowsOut, 'hourOldest'),
                      ms: HOUR_MS,
                    }
                  : undefined
      const text = (v: bigint) => (isCount(name) ? String(v) : formatMinor(v, ccy))
      return [
        {
          limit: name,
          method,
          ...(isCount(name) ? {} : { ccy }),
          amount: text(limit),
          ...(used
            ? {
                used: text(used.used),
                remaining: text(limit > used.used ? limit - used.used : 0n),
                resetsAt: used.from === null ? null : used.from + used.ms,
              }
            : {}),
        },
      ]
    }
    return LIMIT_NAMES.flatMap(entry)
  }
  return {
    accountId,
    tier: limits.tier,
    ccy,
    allowListOnly: limits.settings.allowListOnly,
    limits: [
      ...show(limits.all, null),
      ...Object.entries(limits.byMethod).flatMap(([key, set]) => show(set, methodOfKey(key, out, inc))),
    ],
    overrides: limits.settings.overrides.map((o) => ({
      limit: o.name,
      method: o.method === '' ? null : o.method,
      amount: isCount(o.name) ? String(o.amount) : formatMinor(o.amount, o.refCcy),
      ...(isCount(o.name) ? {} : { ccy: o.refCcy }),
      reason: o.reason,
      setBy: o.setBy,
      setAt: o.setAt,
      expiresAt: o.expiresAt,
    })),
  }
}

/** The method a settings key (`ON_CHAIN`) stands for, as the transactions name it (`on-chain`). */
function methodOfKey(key: string, ...uses: MethodUse[][]): string {
  const seen = uses.flat().find((u) => u.method.toUpperCase().replace(/-/g, '_') === key)
  return (
    seen?.method ??
    key
      .toLowerCase()
      .replace(/_/g, '-')
      .replace(/^vnd-instant$/, 'vnd-instant')
  )
}

const LimitEntry = Type.Object({
  limit: Type.String(),
  method: Type.Union([Type.String(), Type.Null()]),
  ccy: Type.Optional(Type.String()),
  amount: Type.String({
    description: 'The limit: exact decimal text in ccy, or a count (sends_per_hour), or seconds',
  }),
  used: Type.Optional(Type.String()),
  remaining: Type.Optional(Type.String()),
  resetsAt: Type.Optional(Type.Union([Type.Integer(), Type.Null()], { description: 'epoch ms' })),
})

export const AccountLimitsSchema = Type.Object(
  {
    accountId: Type.String(),
    tier: Type.String(),
    ccy: Type.String({ description: 'The reference currency of every amount limit (LIMITS_CCY)' }),
    allowListOnly: Type.Boolean(),
    limits: Type.Array(LimitEntry),
    // An override as the customer sees it: what it is and until when, never the operator's reason
    // or who set it (the admin API and the audit log have those).
    overrides: Type.Array(
      Type.Object({
        limit: Type.String(),
        method: Type.Union([Type.String(), Type.Null()]),
        amount: Type.String(),
        ccy: Type.Optional(Type.String()),
        setAt: Type.Integer(),
        expiresAt: Type.Union([Type.Integer(), Type.Null()]),
      }),
    ),
  },
  {
    examples: [
      {
        accountId: 'acc_7Hq2',
        tier: 'standard',
        ccy: 'USD',
        allowListOnly: false,
        limits: [
          { limit: 'per_transaction', method: null, ccy: 'USD', amount: '1000' },
          {
            limit: 'daily_outgoing',
            method: null,
            ccy: 'USD',
            amount: '5000',
            used: '1250.5',
            remaining: '3749.5',
            resetsAt: 1764806400000,
          },
          {
            limit: 'sends_per_hour',
            method: null,
            amount: '20',
            used: '3',
            remaining: '17',
            resetsAt: 1764723600000,
          },
        ],
        overrides: [],
      },
    ],
  },
)

export function limitsRoutes(fastify: FastifyInstance, deps: LimitsRoutesDeps): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const { db, accounts } = deps
  const config = deps.config.limits
  const AccountParams = Type.Object({ accountId: Type.String({ maxLength: 64 }) })

  app.get(
    '/api/v2/account/:accountId/limits',
    {
      onRequest: bearerAuth(deps.auth),
      schema: {
        tags: ['Accounts'],
        summary: "Read an account's limits and what it has used of them",
        description:
          'Volume limits (per transaction, rolling 24 hours, rolling 30 days) in the reference currency, the sends of the last hour, and the overrides an operator set (docs/limits.md).',
        security: BEARER,
        params: AccountParams,
        response: { 200: Type.Object({ data: AccountLimitsSchema }), ...errors(401, 429) },
      },
    },
    async (request) => {
      const { accountId } = request.params
      // As the account routes: an unrelated or unknown account answers 401 alike.
      if (!(await accounts.canAccess(principalOf(request).accountId, accountId)))
        throw new ApiError('unauthorized', 'This token may not read that account')
      const view = await accountLimitsView(db, config, accountId, Date.now())
      const overrides = view.overrides.map(({ reason: _reason, setBy: _setBy, ...shown }) => shown)
      return { data: { ...view, overrides } }
    },
  )

  // The operator API (docs/limits.md): each change is audited by the admin guard with its reason.
  const schema = { hide: true, tags: ['Admin'] }
  const reason = Type.String({ minLength: 1, maxLength: 500 })
  const by = (request: FastifyRequest) =>
    request.operator?.email ?? request.operator?.operatorId ?? 'admin-token'
  const needAccount = async (accountId: string) => {
    if (!(await accounts.get(accountId))) throw new ApiError('not_found', 'Account not found')
  }

  app.get(
    '/admin/accounts/:accountId/limits',
    { schema: { ...schema, params: AccountParams } },
    async (request) => {
      const { accountId } = request.params
      await needAccount(accountId)
      return {
        ...(await accountLimitsView(db, config, accountId, Date.now())),
        allowList: await allowList(db, accountId, ALLOW_LIST_SHOWN),
      }
    },
  )

  app.put(
    '/admin/accounts/:accountId/limits',
    {
      schema: {
        ...schema,
        params: AccountParams,
        body: Type.Object({
          tier: Type.Optional(Type.Union([Type.String({ pattern: '^[a-z0-9]{1,32}$' }), Type.Null()])),
          allowListOnly: Type.Optional(Type.Boolean()),
          reason,
        }),
      },
    },
    async (request) => {
      const { accountId } = request.params
      const { tier, allowListOnly } = request.body
      await needAccount(accountId)
      const before = await effectiveLimits(db, config, accountId, Date.now())
      await writeAccountSettings(
        db,
        accountId,
        {
          ...(tier !== undefined ? { tier } : {}),
          ...(allowListOnly !== undefined ? { allowListOnly } : {}),
        },
        Date.now(),
      )
      const after = {
        tier: tier === undefined ? before.settings.tier : tier,
        allowListOnly: allowListOnly ?? before.settings.allowListOnly,
      }
      auditNote(request, {
        target: `accountId=${accountId}`,
        before: { tier: before.settings.tier, allowListOnly: before.settings.allowListOnly },
        after: { ...after, reason: request.body.reason },
      })
      return { accountId, ...after }
    },
  )

  const OverrideKey = Type.Object({
    limit: Type.Union(LIMIT_NAMES.map((n) => Type.Literal(n))),
    method: Type.Optional(Type.String({ pattern: '^[a-z0-9-]{1,32}$' })),
  })

  app.put(
    '/admin/accounts/:accountId/limits/overrides',
    {
      schema: {
        ...schema,
        params: AccountParams,
        body: Type.Object({
          ...OverrideKey.properties,
          amount: Type.String({
            maxLength: 40,
            description: 'decimal text in LIMITS_CCY, or a count / seconds',
          }),
          reason,
          expiresAt: Type.Optional(Type.Integer({ minimum: 0, description: 'epoch ms' })),
        }),
      },
    },
    async (request) => {
      const { accountId } = request.params
      const { limit, method = '', amount, expiresAt } = request.body
      await needAccount(accountId)
      let minor: bigint
      try {
        minor = isCount(limit)
          ? BigInt(/^\d{1,9}$/.test(amount) ? amount : 'x')
          : decimalMinor('amount', amount, config.ccy)
      } catch {
        throw new ApiError(
          'invalid_amount',
          `amount: ${isCount(limit) ? 'a whole number' : `a decimal ${config.ccy} amount`}`,
          [{ field: 'amount', issue: isCount(limit) ? 'a whole number' : `a decimal ${config.ccy} amount` }],
        )
      }
      const at = Date.now()
      if (expiresAt !== undefined && expiresAt <= at)
        throw new ApiError('invalid_request', 'expiresAt: in the future', [
          { field: 'expiresAt', issue: 'in the future' },
        ])
      await writeOverride(db, accountId, {
        name: limit,
        method,
        amount: minor,
        refCcy: config.ccy,
        reason: request.body.reason,
        setBy: by(request),
        setAt: at,
        expiresAt: expiresAt ?? null,
      })
      const after = {
        limit,
        method: method || null,
        amount,
        ccy: isCount(limit) ? null : config.ccy,
        expiresAt: expiresAt ?? null,
        reason: request.body.reason,
      }
      auditNote(request, { target: `accountId=${accountId}`, after })
      return { accountId, ...after }
    },
  )

  app.delete(
    '/admin/accounts/:accountId/limits/overrides',
    {
      schema: { ...schema, params: AccountParams, body: Type.Object({ ...OverrideKey.properties, reason }) },
    },
    async (request) => {
      const { accountId } = request.params
      const { limit, method = '' } = request.body
      if (!(await deleteOverride(db, accountId, limit, method)))
        throw new ApiError('not_found', 'No such override')
      auditNote(request, {
        target: `accountId=${accountId}`,
        before: { limit, method: method || null },
        after: { removed: true, reason: request.body.reason },
      })
      return { accountId, limit, method: method || null, removed: true }
    },
  )

  const Destination = Type.Object({
    destination: Type.String({
      minLength: 3,
      maxLength: 200,
      description: 'tron:T…, btc:bc1…, ln:<node key>, bank:<institution>:<account>',
    }),
    reason,
  })
  const destinationOf = (text: string) => {
    const d = normaliseDestination(text)
    if (!d)
      throw new ApiError(
        'invalid_request',
        'destination: tron:<address>, btc:<address>, ln:<node key> or bank:<institution>:<account>',
        [{ field: 'destination', issue: 'not a destination' }],
      )
    return d
  }

  app.post(
    '/admin/accounts/:accountId/limits/allow-list',
    { schema: { ...schema, params: AccountParams, body: Destination } },
    async (request) => {
      const { accountId } = request.params
      await needAccount(accountId)
      const destination = destinationOf(request.body.destination)
      await addAllowed(db, accountId, {
        destination,
        reason: request.body.reason,
        addedBy: by(request),
        addedAt: Date.now(),
      })
      auditNote(request, {
        target: `accountId=${accountId}`,
        after: { destination, reason: request.body.reason },
      })
      return { accountId, destination }
    },
  )

  app.delete(
    '/admin/accounts/:accountId/limits/allow-list',
    { schema: { ...schema, params: AccountParams, body: Destination } },
    async (request) => {
      const { accountId } = request.params
      const destination = destinationOf(request.body.destination)
      if (!(await removeAllowed(db, accountId, destination)))
        throw new ApiError('not_found', 'Not on the allow-list')
      auditNote(request, {
        target: `accountId=${accountId}`,
        before: { destination },
        after: { removed: true, reason: request.body.reason },
      })
      return { accountId, destination, removed: true }
    },
  )
}

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import type { AccountsService } from '../accounts/service.js'
import type { AuthService } from '../auth/service.js'
import type { Db } from '../db/db.js'
import { ApiError, fieldError } from '../shared/errors.js'
import { MAX_MINOR, formatMinor, parseAmount } from '../shared/amount.js'
import { postEntry, systemAccountId, walletById } from '../ledger/ledger.js'
import { bearerAuth, principalOf } from '../auth/hook.js'
import { AmountIn, BEARER, errors } from '../http/schemas.js'
import { walletJson } from '../accounts/routes.js'
import { asAccountId } from '../shared/ids.js'

/** Credit a wallet from the sandbox funding account: test money, balanced like any other entry. */
export async function fundWallet(
  deps: { db: Db; accounts: AccountsService },
  input: { accountId: string; ccy: string; amount: unknown },
) {
  const ccy = String(input.ccy).toUpperCase()
  const wallet = await deps.db.tx(async (q) => {
    const walletId = await deps.accounts.walletId(q, asAccountId(input.accountId), ccy)
    if (!walletId) throw fieldError('invalid_request', 'ccy', 'the account has no wallet in this currency')
    const parsed = parseAmount(input.amount, ccy)
    if (!parsed.ok) throw fieldError('invalid_amount', 'amount', parsed.issue)
    // Test money stops at the per-side cap, so repeated funding can never push a balance past what
    // PostgreSQL's bigint holds. The row lock keeps two fundings from passing the check together.
    const locked = await walletById(q, walletId, { lock: true })
    if (locked!.postedMinor + parsed.minor > MAX_MINOR) {
      throw fieldError(
        'invalid_amount',
        'amount',
        `would take the wallet above ${formatMinor(MAX_MINOR, ccy)} ${ccy}, the most the sandbox funds`,
      )
    }
    await postEntry(q, {
      txnId: null,
      kind: 'sandbox_fund',
      now: Date.now(),
      postings: [
        { accountId: systemAccountId('sandbox-funding', ccy), ccy, amount: -parsed.minor },
        { accountId: walletId, ccy, amount: parsed.minor },
      ],
    })
    return walletId
  })
  return walletJson((await deps.accounts.wallet(wallet))!)
}

export function sandboxFundRoutes(
  fastify: FastifyInstance,
  deps: { db: Db; accounts: AccountsService; auth: AuthService; adminPreHandler: (r: any) => Promise<void> },
): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const body = Type.Object({ ccy: Type.String({ maxLength: 8 }), amount: AmountIn('Amount to credit') })
  app.post(
    '/sandbox/fund',
    {
      onRequest: bearerAuth(deps.auth),
      schema: {
        tags: ['Sandbox'],
        summary: "Credit the caller's wallet with test money (sandbox only)",
        description:
          'A funding that would take the wallet past 10^17 minor units (1,000,000,000 BTC) is 400 invalid_amount, so repeated funding can never overflow a balance.',
        security: BEARER,
        body,
        response: { 200: Type.Object({ data: Type.Ref('Wallet') }), ...errors(400, 401, 429) },
      },
    },
    async (request) => {
      const b = request.body
      return { data: await fundWallet(deps, { accountId: principalOf(request).accountId, ...b }) }
    },
  )
  app.post(
    '/admin/sandbox/fund',
    {
      onRequest: deps.adminPreHandler,
      schema: {
        hide: true,
        body: Type.Object({
          accountId: Type.String({ maxLength: 64 }),
          ccy: Type.String(),
          amount: AmountIn(''),
        }),
      },
    },
    async (request) => {
      const b = request.body
      if (!(await deps.accounts.get(b.accountId))) throw new ApiError('not_found', 'Account not found')
      return { data: await fundWallet(deps, b) }
    },
  )
}

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { adminAuth } from '../operators/admin-auth.js'
import { fieldOf } from '../http/request-fields.js'
import { ApiError } from '../shared/errors.js'
import type { BitcoinDeps } from '../bitcoin/deps.js'
import { reorgedDeposits } from './deposits.js'
import { bumpOnchainSend } from './bump.js'

/** The largest fee rate an operator can bump to in one step, sat/vB: a typo must not burn the wallet. */
const BUMP_RATE_MAX = 2_000n

/**
 * Operator routes of the on-chain rail, behind ADMIN_TOKEN (used by `svcpay onchain ...`):
 * - `POST /admin/onchain/sends/:txnId/bumpfee` `{ feeRate? }` (sat/vB; default the network's
 *   next-block estimate): replaces a stuck send's transaction (BIP 125); the send follows it.
 * - `GET /admin/onchain/reorgs`: credited deposits whose block left the best chain.
 */
export function onchainAdminRoutes(
  fastify: FastifyInstance,
  deps: { adminToken: string; bitcoin: BitcoinDeps },
): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const onRequest = adminAuth(deps.adminToken)
  const schema = { hide: true, tags: ['Admin'] }

  const params = Type.Object({ txnId: Type.String() })

  // The body is optional and checked here, so that a bad feeRate keeps its own message.
  app.post(
    '/admin/onchain/sends/:txnId/bumpfee',
    { onRequest, schema: { ...schema, params } },
    async (request) => {
      const { txnId } = request.params
      const feeRate = fieldOf(request.body, 'feeRate')
      let rate: bigint | undefined
      if (feeRate !== undefined) {
        if (typeof feeRate !== 'number' || !Number.isSafeInteger(feeRate) || feeRate < 1)
          throw new ApiError('invalid_request', 'feeRate: a whole number of sat/vB, at least 1')
        rate = BigInt(feeRate)
        if (rate > BUMP_RATE_MAX)
          throw new ApiError('invalid_request', `feeRate: at most ${BUMP_RATE_MAX} sat/vB`)
      }
      const result = await bumpOnchainSend(deps.bitcoin, txnId, rate)
      if ('error' in result) {
        if (result.error === 'not_found') throw new ApiError('not_found', result.message)
        if (result.error === 'invalid_state') throw new ApiError('invalid_state', result.message)
        if (result.error === 'not_supported') throw new ApiError('invalid_request', result.message)
        // The node refused the bump (already mined, fee too low, ...): its reason, as a conflict.
        throw new ApiError('invalid_state', `${result.error}: ${result.message}`)
      }
      return result
    },
  )

  app.get('/admin/onchain/reorgs', { onRequest, schema }, async () => ({
    data: await reorgedDeposits(deps.bitcoin.db),
  }))
}

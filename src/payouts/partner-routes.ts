import { refusedField } from './vnd/skipped-credits.js'
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import type { Db } from '../db/db.js'
import { errors } from '../http/schemas.js'
import type { PayoutRails } from './rails.js'
import { ApiError } from '../shared/errors.js'
import { checkPayoutNow } from './returns.js'
import type { BankHttpRail } from './vnd/bank-http.js'
import { NOTIFICATION_BYTES_MAX } from './vnd/bank-http-request.js'
import type { CreditSink } from './vnd/bank-credit.js'

/** The partner routes are always declared (and documented); without the bank rail's secret they answer 404. */
const notEnabled = () =>
  new ApiError(
    'not_found',
    'Bank partner notifications are not enabled here: they need VND=bank-http and BANK_PAYOUT_WEBHOOK_SECRET',
  )

/** What the partner gets back for a notification taken. */
const RECEIVED = Type.Object({ received: Type.Literal(true) }, { examples: [{ received: true }] })

/** A partner notification is one payout or one credit; anything near this size is not one. */
const NOTIFICATION_BODY_MAX = NOTIFICATION_BYTES_MAX

/**
 * Where the bank payout partner tells us a payout changed (docs/payouts.md, "Notifications"). The
 * body must carry the partner's signature over its exact bytes; a good one makes that payout due
 * at once, and the worker reads the payout from the partner as it would after a poll. Answers 404
 * unless `BANK_PAYOUT_WEBHOOK_SECRET` is set.
 */
export function bankNotificationRoutes(
  app: FastifyInstance,
  deps: { db: Db; verify: PayoutRails['verifyBankNotification'] },
): void {
  app.post(
    '/partners/bank/notifications',
    {
      bodyLimit: NOTIFICATION_BODY_MAX,
      schema: {
        tags: ['Bank partner'],
        summary: 'Bank payout partner notification',
        description:
          'Called by the bank payout partner, not by API clients. The body is the partner Payout; header X-Partner-Signature is the lowercase hex HMAC-SHA256 of the exact body bytes under BANK_PAYOUT_WEBHOOK_SECRET.',
        headers: Type.Object({ 'x-partner-signature': Type.Optional(Type.String()) }),
        response: { 200: RECEIVED, ...errors(400, 401, 404, 413) },
      },
    },
    async (request) => {
      if (!deps.verify) throw notEnabled()
      const signature = request.headers['x-partner-signature']
      // Over the bytes as received, not the text decoded from them (invalid UTF-8 would change).
      const notice = deps.verify(
        request.rawBodyBytes ?? Buffer.alloc(0),
        typeof signature === 'string' ? signature : undefined,
      )
      if (!notice) throw new ApiError('unauthorized', 'The notification is not signed by the payout partner')
      // A reference we do not hold in flight (settled, or never ours) is acknowledged all the same:
      // the partner has nothing to retry.
      await checkPayoutNow(deps.db, 'vnd_payout', notice.bankRef, Date.now())
      return { received: true as const }
    },
  )
}

/**
 * Where the bank partner reports an incoming transfer to our account (docs/payouts.md, "Incoming
 * credits"). Signed as the payout notifications are. The answer is 200 only once the sink has
 * recorded the credit, so that a partner retries a notification we could not take; a replay names
 * the same credit id, which the sink takes once. Answers 404 unless `VND=bank-http` and
 * `BANK_PAYOUT_WEBHOOK_SECRET` are set.
 */
export function bankCreditRoutes(
  app: FastifyInstance,
  deps: {
    verify: BankHttpRail['verifyCredit'] | undefined
    sink: CreditSink | undefined
    /** Keeps a signed credit that cannot be used, for operators (src/payouts/vnd/skipped-credits.ts). */
    recordSkip?: (item: { id?: string; problem: string }) => Promise<void>
  },
): void {
  app.post(
    '/partners/bank/credits',
    {
      bodyLimit: NOTIFICATION_BODY_MAX,
      schema: {
        tags: ['Bank partner'],
        summary: 'Bank partner credit notification',
        description:
          'Called by the bank partner, not by API clients: one incoming transfer, `{ "type": "credit", "id", "amount", "currency": "VND", "description", "bookedAt", "payer"? }`. Header X-Partner-Signature is the lowercase hex HMAC-SHA256 of the exact body bytes under BANK_PAYOUT_WEBHOOK_SECRET.',
        headers: Type.Object({ 'x-partner-signature': Type.Optional(Type.String()) }),
        response: { 200: RECEIVED, ...errors(400, 401, 404, 413, 503) },
      },
    },
    async (request) => {
      if (!deps.verify || !deps.sink) throw notEnabled()
      const signature = request.headers['x-partner-signature']
      const notice = deps.verify(
        request.rawBodyBytes ?? Buffer.alloc(0),
        typeof signature === 'string' ? signature : undefined,
      )
      if (!notice.ok && notice.error === 'unauthorized')
        throw new ApiError('unauthorized', 'The notification is not signed by the bank partner')
      if (!notice.ok) {
        await deps.recordSkip?.({ ...(notice.id ? { id: notice.id } : {}), problem: notice.problem })
        throw new ApiError('invalid_request', 'The notification is not a well-formed credit', [
          {
            field: notice.problem === 'booked_at' ? 'bookedAt' : notice.problem,
            issue: 'missing or malformed',
          },
        ])
      }
      try {
        await deps.sink(notice.credit)
      } catch (err) {
        // Refused as it stands (not a failure to record): sending it again will not help.
        if (err instanceof ApiError && err.status < 500) {
          await deps.recordSkip?.({ id: notice.credit.bankRef, problem: refusedField(err) })
          throw new ApiError('invalid_request', 'The credit cannot be recorded as it stands', err.details)
        }
        request.log.warn(
          { bankRef: notice.credit.bankRef, error: (err as Error).name },
          'a bank credit could not be recorded; the partner will retry',
        )
        throw new ApiError('service_unavailable', 'The credit could not be recorded now; send it again later')
      }
      return { received: true as const }
    },
  )
}

import { ApiError } from '../shared/errors.js'
import { formatRate } from '../shared/amount.js'
import { newTxnId, type TxnId } from '../shared/ids.js'
import { flowOf, type CreateInput, type Quote } from './flow.js'
import type { TxnKind } from './state-machine.js'
import { getByExtRef } from './repository.js'
import type { NewTxn, Txn } from './txn.js'
import { walletDebit } from './money.js'
import { checkQuoteAmounts } from './amount-limits.js'
import { isRefusal, refusalApiError } from './errors.js'
import { legacyRequestHash, requestHash } from './request-hash.js'
import type { TxnServiceDeps } from './service.js'
import { gatesOf, runCreateGates, runQuoteGates } from './gates.js'

/**
 * Create: the flow's quote, checked against the amount limits and stored `quoted`. The same
 * extRefId with the same request answers the transaction it made; with another request, 409.
 */
export async function createQuote(deps: TxnServiceDeps, input: CreateInput, rawBody: unknown): Promise<Txn> {
  const { db, config, repository } = deps
  const kind = deps.kinds.kindFor(input, config.walletCurrencies)
  const flow = flowOf(deps.flows, kind)
  // A gate (the brake) may refuse the kind now, before anything is read or written.
  const gates = gatesOf(deps.gates, kind)
  await runCreateGates(gates, db, kind)
  const hash = requestHash(rawBody)
  if (input.extRefId) {
    const existing = await getByExtRef(db, input.accountId, input.extRefId)
    if (existing) return sameRequestOr409(existing, hash, rawBody)
  }
  const at = repository.now()
  const rates = await deps.rates.current()
  const quoted = await flow.quote({ input, rates, now: at })
  const limits = { receiveMaxSats: config.receiveMaxSats }
  const quote = isRefusal(quoted)
    ? quoted
    : checkQuoteAmounts(deps.kinds.declaration(kind), input, quoted, limits)
  if (isRefusal(quote)) throw refusalApiError(quote)
  const expiresAt = at + config.quoteTtlS * 1000
  // One statement, so no transaction around it: the quote, its outbox event and, for a
  // wallet-funded quote, its hold. A quote whose wallet cannot cover it is still a quote (without
  // a hold): confirm tries the hold again.
  const fields = quotedRow({ id: newTxnId(), input, kind, quote, hash, at, expiresAt })
  await runQuoteGates(gates, db, fields, rates)
  const hold = {
    accountId: input.accountId,
    ccy: input.sourceReq.ccy,
    amount: walletDebit(fields),
    now: at,
  }
  const result = await repository.insertTxn(db, fields, {
    event: true,
    ...(quote.fromWallet ? { hold } : {}),
  })
  if (result) {
    deps.recentQuotes.remember(result)
    return result
  }
  const existing = await getByExtRef(db, input.accountId, input.extRefId!)
  return sameRequestOr409(existing!, hash, rawBody)
}

/** The row a quote is stored as: made at `at`, due to expire (and be looked at) at `expiresAt`. */
export function quotedRow(q: {
  id: TxnId
  input: CreateInput
  kind: TxnKind
  quote: Quote
  hash: string
  at: number
  expiresAt: number
}): NewTxn {
  const { input, quote, at } = q
  return {
    id: q.id,
    accountId: input.accountId,
    extRefId: input.extRefId ?? null,
    requestHash: q.hash,
    kind: q.kind,
    state: 'quoted',
    note: input.note ?? null,
    deductFeesFromDest: input.deductNetworkFeesFromDest,
    srcCcy: input.sourceReq.ccy,
    srcMethod: input.sourceReq.method,
    srcAmountMinor: quote.srcAmount,
    srcFeeMinor: quote.srcFee,
    srcNetworkFeeMinor: quote.srcNetworkFee,
    srcDetails: quote.srcDetails,
    srcCreatedAtMs: at,
    srcUpdatedAtMs: at,
    destCcy: input.destReq.ccy,
    destMethod: input.destReq.method,
    destAmountMinor: quote.destAmount,
    destDetails: quote.destDetails,
    destCreatedAtMs: at,
    destUpdatedAtMs: at,
    fxRate: formatRate(quote.fxRate),
    expiresAtMs: q.expiresAt,
    kyc: quote.kyc ?? null,
    sourceOfFunds: quote.sourceOfFunds ?? null,
    nextCheckAtMs: q.expiresAt,
    createdAtMs: at,
    updatedAtMs: at,
  }
}

/** The transaction an extRefId already names, when the request is the same one; else 409. */
export function sameRequestOr409(existing: Txn, hash: string, rawBody: unknown): Txn {
  if (existing.requestHash !== hash && existing.requestHash !== legacyRequestHash(rawBody)) {
    throw new ApiError('duplicate_ext_ref_id', 'extRefId was already used for a different transaction', [
      { field: 'extRefId', issue: 'already used with a different request body' },
    ])
  }
  return existing
}

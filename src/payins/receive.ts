import type { Queryable } from '../db/db.js'
import { nowBy } from '../shared/clock.js'
import { InvariantError } from '../shared/assert.js'
import { ApiError } from '../shared/errors.js'
import type { ConfirmContext, Flow, QuoteContext } from '../transactions/flow.js'
import type { Txn } from '../transactions/txn.js'
import { receiveFxQuote } from '../transactions/receive-fx.js'
import { allInRate } from '../rates/fx.js'
import { checkAgainAt } from '../bitcoin/schedule.js'
import { invoicePageUrl, newPageId } from '../bitcoin/hosted-page.js'
import { receiveQuote } from '../bitcoin/receive-quote.js'
import type { PayinDeps } from './deps.js'
import { newMemo } from './match.js'
import { encodeVietQr } from './vietqr.js'
import { sql } from '../db/sql.js'

/** Tries at a fresh memo before giving up (a collision among 3.4e10 memos is already rare). */
const MEMO_TRIES = 5

/** The keys of a VND receive's source details, null until confirm (the hosted page reads them). */
const UNCONFIRMED_DETAILS = {
  bankBin: null,
  bankName: null,
  bankAcctNum: null,
  accountName: null,
  amount: null,
  memo: null,
  vietQr: null,
  invoicePageUrl: null,
  expiredAt: null,
}

/**
 * VND receive (`vnd-instant:VND > svcpay:VND`, or `svcpay:BTC|USDT` through the exchange): confirm hands out our collecting account, the exact
 * amount, a unique transfer memo and their VietQR code (srccreated). The bank's credit for it
 * arrives through `ingestBankCredit` (credits.ts), which completes the receive; unpaid at its expiry
 * it expires, and a later transfer with its memo becomes a deposit.
 */
export function vndReceiveFlow(deps: PayinDeps): Flow {
  return {
    kind: 'vnd_receive',
    quote: (ctx) => quoteVndReceive(deps, ctx),
    confirm: (q, txn, ctx) => confirmVndReceive(deps, q, txn, ctx),
    advance: (txn) => expireIfDue(deps, txn),
  }
}

/**
 * The amounts work as every receive's: the fee (`FEE_VND_RECEIVE`) is in dong, on the side that
 * was given. Into a BTC or USDT wallet the dong is converted at the rate quoted now, as a Lightning
 * receive into another wallet is (src/transactions/receive-fx.ts); every credit for the receive,
 * a late one too, uses that rate.
 */
async function quoteVndReceive(deps: PayinDeps, { input, rates }: QuoteContext) {
  if (!deps.vndReceive.enabled)
    throw new ApiError('method_not_available', 'Receiving VND is not enabled on this server (VND_RECEIVE)')
  const feeRule = deps.config.fees.vnd_receive!
  const dest = input.destReq.ccy
  if (dest === 'VND') return receiveQuote(input, feeRule, UNCONFIRMED_DETAILS)
  const fx = allInRate(
    deps.rates.perBtc(rates, 'VND'),
    deps.rates.perBtc(rates, dest),
    deps.config.fxSpreadBps,
  )
  return receiveFxQuote({ input, fx, feeRule, srcDetails: UNCONFIRMED_DETAILS })
}

/** A memo never handed out before, recorded for this receive (the memos table's key decides). */
async function reserveMemo(q: Queryable, txn: Txn, now: number): Promise<string> {
  for (let i = 0; i < MEMO_TRIES; i++) {
    const memo = newMemo()
    const { rowCount } = await q.query(
      sql`INSERT INTO vnd_receive_memos (memo, txn_id, account_id, created_at) VALUES (${memo}, ${txn.id}, ${txn.accountId}, ${now})
       ON CONFLICT (memo) DO NOTHING`,
    )
    if (rowCount === 1) return memo
  }
  throw new InvariantError(`no free transfer memo after ${MEMO_TRIES} tries`)
}

async function confirmVndReceive(deps: PayinDeps, q: Queryable, txn: Txn, ctx: ConfirmContext): Promise<Txn> {
  const account = deps.vndReceive
  const memo = await reserveMemo(q, txn, ctx.now)
  const pageId = newPageId()
  const expiresAt = ctx.now + account.ttlS * 1000
  return ctx.transition('srccreated', {
    srcDetails: {
      bankBin: account.bankBin,
      bankName: account.bankName,
      bankAcctNum: account.accountNumber,
      accountName: account.accountName,
      amount: txn.srcAmountMinor.toString(),
      memo,
      vietQr: encodeVietQr({
        bankBin: account.bankBin,
        accountNumber: account.accountNumber,
        amount: txn.srcAmountMinor,
        memo,
      }),
      invoicePageUrl: invoicePageUrl(deps.config, pageId),
      // The receive's expiry as ISO 8601 text, as an on-chain receive gives it.
      expiredAt: new Date(expiresAt).toISOString(),
    },
    railRef: memo,
    pageId,
    expiresAtMs: expiresAt,
    nextCheckAtMs: expiresAt,
  })
}

/** The worker's step: an unpaid receive expires at its expiry (a later transfer is a deposit). */
async function expireIfDue(deps: PayinDeps, txn: Txn): Promise<void> {
  if (txn.state !== 'srccreated') return
  if (nowBy(deps) < txn.expiresAtMs) return checkAgainAt(deps.db, txn, txn.expiresAtMs)
  await deps.transactions().apply(txn.id, async (_q, t, move) => {
    if (t.state === 'srccreated') await move('expired', { msg: 'receive_expired' })
  })
}

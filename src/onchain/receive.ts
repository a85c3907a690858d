import type { Queryable } from '../db/db.js'
import { nowBy } from '../shared/clock.js'
import { buildBip21, satsToBtcText } from './bip21.js'
import { RailFailure } from '../rails/rail.js'
import { formatMinor } from '../shared/amount.js'
import { assert, InvariantError } from '../shared/assert.js'
import type { ConfirmContext, Flow, QuoteContext } from '../transactions/flow.js'
import { decimalDetail } from '../transactions/txn.js'
import type { Txn } from '../transactions/txn.js'
import { checkAgainAt } from '../bitcoin/schedule.js'
import { invoicePageUrl, newPageId } from '../bitcoin/hosted-page.js'
import { receiveQuote } from '../bitcoin/receive-quote.js'
import type { BitcoinDeps } from '../bitcoin/deps.js'
import { advanceDeposit, nextAddressCheck, newWatchedAddress, sweepAddress } from './deposits.js'
import { CONFIRMATION_POLL_MS, RAIL_RETRY_MS } from './polling.js'
import { sql } from '../db/sql.js'

/** The address derived outside the confirm transaction, and the label its BIP21 URI carries. */
interface PreparedAddress {
  address: string
  index: number
  label?: string
}

/**
 * On-chain receive: confirm hands out a fresh BIP84 address (srcintent) with a BIP21 URI and a
 * hosted page. The deposit watcher (deposits.ts) moves it to srccreated when a payment is seen;
 * `advance` then counts confirmations and credits what arrived (completed). Unpaid at its expiry,
 * it expires; the address stays watched, and a later payment becomes a `deposit` of its own.
 */
export function onchainReceiveFlow(deps: BitcoinDeps): Flow {
  return {
    kind: 'onchain_receive',
    quote: (ctx) => quoteOnchainReceive(deps, ctx),
    prepareConfirm: (txn) => deriveAddress(deps, txn),
    confirm: (q, txn, ctx) => confirmOnchainReceive(deps, q, txn, ctx),
    advance: (txn) => advanceOnchainReceive(deps, txn),
  }
}

/** A deposit to an address no waiting receive was made for: created by the watcher, completed here. */
export function depositFlow(deps: BitcoinDeps): Flow {
  return {
    kind: 'deposit',
    async quote() {
      throw new InvariantError('deposits are created by the watcher, never quoted')
    },
    async confirm() {
      throw new InvariantError('deposits are created by the watcher, never confirmed')
    },
    async advance(txn) {
      if (txn.state === 'srccreated') await advanceDeposit(deps, txn, RAIL_RETRY_MS, CONFIRMATION_POLL_MS)
    },
  }
}

async function quoteOnchainReceive(deps: BitcoinDeps, { input }: QuoteContext) {
  return receiveQuote(input, deps.config.fees.onchain_receive!, { address: null, invoicePageUrl: null })
}

async function deriveAddress(deps: BitcoinDeps, txn: Txn): Promise<PreparedAddress> {
  const account = await deps.accounts.get(txn.accountId)
  return { ...(await newWatchedAddress(deps)), label: account?.displayName }
}

/** Inside the confirm transaction: the address is watched for this receive until its expiry. */
async function confirmOnchainReceive(
  deps: BitcoinDeps,
  q: Queryable,
  txn: Txn,
  ctx: ConfirmContext,
): Promise<Txn> {
  const prepared = ctx.prepared as PreparedAddress | undefined
  assert(prepared, 'the address was derived before confirm')
  const expiresAt = ctx.now + deps.config.onchainReceiveTtlS * 1000
  await q.query(
    sql`INSERT INTO onchain_addresses (address, account_id, txn_id, kind, derivation_index, expires_at, next_check_at, created_at)
     VALUES (${prepared.address}, ${txn.accountId}, ${txn.id}, 'txn', ${prepared.index}, ${expiresAt}, ${nextAddressCheck({ kind: 'txn', expires_at: BigInt(expiresAt) }, ctx.now)}, ${ctx.now})`,
  )
  const pageId = newPageId()
  const amountBtc = satsToBtcText(txn.srcAmountMinor)
  return ctx.transition('srcintent', {
    srcDetails: {
      address: prepared.address,
      amount: decimalDetail(formatMinor(txn.srcAmountMinor, 'BTC')),
      invoice: buildBip21({
        address: prepared.address,
        amountBtc,
        ...(prepared.label ? { label: prepared.label } : {}),
      }),
      invoicePageUrl: invoicePageUrl(deps.config, pageId),
      expiredAt: new Date(expiresAt).toISOString(),
    },
    pageId: pageId,
    railRef: prepared.address,
    expiresAtMs: expiresAt,
    nextCheckAtMs: expiresAt,
  })
}

/** Paid: count confirmations. Unpaid: wait for the expiry, look once more, then expire. */
async function advanceOnchainReceive(deps: BitcoinDeps, txn: Txn): Promise<void> {
  if (txn.state === 'srccreated') return advanceDeposit(deps, txn, RAIL_RETRY_MS, CONFIRMATION_POLL_MS)
  if (txn.state !== 'srcintent') return
  if (nowBy(deps) < txn.expiresAtMs) {
    await checkAgainAt(deps.db, txn, txn.expiresAtMs)
    return
  }
  // Look once more before giving up: a payment seen now still settles this receive.
  try {
    await sweepAddress(deps, String(txn.srcDetails.address))
  } catch (err) {
    if (!(err instanceof RailFailure)) throw err
    await checkAgainAt(deps.db, txn, nowBy(deps) + RAIL_RETRY_MS)
    return
  }
  await deps.transactions().apply(txn.id, async (_q, t, move) => {
    if (t.state === 'srcintent') await move('expired', { msg: 'address_expired' })
  })
}

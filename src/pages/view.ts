import type { Queryable } from '../db/db.js'
import { buildBip21 } from '../onchain/bip21.js'
import { convertDown } from '../rates/fx.js'
import type { RatesService } from '../rates/service.js'
import { formatMinor } from '../shared/amount.js'
import { precisionOf } from '../shared/currency.js'
import { amountOutcome } from '../transactions/receive-outcome.js'
import { pageReceive, pageStatusRow } from '../transactions/reads-reports.js'
import type { TxnState } from '../shared/txn-states.js'
import type { PageStatus } from './page-status.js'
import type { BitcoinPageView, InvoicePageView, VietQrPageView } from './render.js'

/**
 * What the hosted invoice page reads about a transaction, and how it turns that into what the
 * payer may see. Only the receive's own payment data leaves this module: never the transaction
 * id, the account id, fees, what the wallet was credited or anything about the merchant beyond its
 * name. What the payment delivered on the rail is shown once it differs from what was asked.
 */

/** Transaction kinds that have a hosted page (its page id set at confirm by the receive's flow). */
export type PageKind = 'ln_receive' | 'onchain_receive' | 'vnd_receive'

const PAGE_KINDS: readonly string[] = ['ln_receive', 'onchain_receive', 'vnd_receive'] satisfies PageKind[]

function isPageKind(kind: string): kind is PageKind {
  return PAGE_KINDS.includes(kind)
}

/** The columns of a receive the page needs, read by its page id. */
export interface PageRecord {
  /** Internal: the notifier key of the page's stream. Never rendered or streamed. */
  txnId: string
  kind: PageKind
  state: TxnState
  /** What the payer is asked to pay (the source amount) in minor units: sats, or đồng for vnd_receive. */
  srcAmount: bigint
  /** What arrived on the rail, once completed (`src_settled`), in the same unit; else null. */
  srcSettled: bigint | null
  srcDetails: Record<string, unknown>
  expiresAtMs: number
  /** The receiving account's display name. */
  merchantName: string
}

/** The live part of a page: its state as the payer sees it, and until when it may be paid. */
export interface PageSnapshot {
  status: PageStatus
  expiresAtMs: number
}

/**
 * Page ids are 128 random bits in base64url (`newPageId` in bitcoin/hosted-page.ts, 22
 * characters). Anything else is answered as unknown without a query.
 */
const PAGE_ID_RE = /^[A-Za-z0-9_-]{22,64}$/

export function isPageIdShape(pageId: string): boolean {
  return PAGE_ID_RE.test(pageId)
}

/** The receive behind a page id, or undefined for an unknown id. */
export async function findPage(q: Queryable, pageId: string): Promise<PageRecord | undefined> {
  if (!isPageIdShape(pageId)) return undefined
  // Only these columns are read, so nothing else of the row can reach the page by accident.
  const row = await pageReceive(q, pageId, PAGE_KINDS)
  if (!row || !isPageKind(row.kind)) return undefined
  return {
    txnId: row.id,
    kind: row.kind,
    state: row.state,
    srcAmount: BigInt(row.src_amount),
    srcSettled: row.src_settled === null ? null : BigInt(row.src_settled),
    srcDetails: row.src_details ?? {},
    expiresAtMs: Number(row.expires_at),
    merchantName: row.display_name,
  }
}

/** The current status of the page of `txnId`, for its stream; undefined if the row is gone. */
export async function readPageSnapshot(
  q: Queryable,
  txnId: string,
  confirmationsNeeded: number,
): Promise<PageSnapshot | undefined> {
  const row = await pageStatusRow(q, txnId)
  if (!row || !isPageKind(row.kind)) return undefined
  return {
    status: pageStatusOf(
      {
        kind: row.kind,
        state: row.state,
        srcAmount: BigInt(row.src_amount),
        srcSettled: row.src_settled === null ? null : BigInt(row.src_settled),
        srcDetails: row.src_details ?? {},
      },
      confirmationsNeeded,
    ),
    expiresAtMs: Number(row.expires_at),
  }
}

/**
 * The payer's view of a receive's state:
 * - Lightning and VND bank transfer: srccreated is awaiting payment, completed is paid, expired is expired.
 * - Paid with another amount than asked (short or over, contract section 11): paid, with what
 *   arrived and which it was, by the same rule as the transaction's `msg` (receive-outcome.ts).
 * - On-chain: srcintent is awaiting payment; srccreated (a payment is in the mempool or a block) is
 *   seen, with its confirmations so far against those required; completed is paid; expired is
 *   expired. A payment to an expired address becomes a deposit transaction of its own, so the
 *   expired receive, and its page, stay expired.
 * Any other state cannot be paid any more and is shown as expired: the page must never invite a
 * payment that nothing would credit.
 */
export function pageStatusOf(
  txn: Pick<PageRecord, 'kind' | 'state' | 'srcDetails'> &
    Partial<Pick<PageRecord, 'srcAmount' | 'srcSettled'>>,
  confirmationsNeeded: number,
): PageStatus {
  switch (txn.state) {
    case 'srcintent':
      return { state: txn.kind === 'onchain_receive' ? 'awaiting_payment' : 'expired' }
    case 'srccreated':
      if (txn.kind !== 'onchain_receive') return { state: 'awaiting_payment' }
      return { state: 'seen', confirmations: confirmationsOf(txn.srcDetails, confirmationsNeeded) }
    case 'completed': {
      const arrived = txn.srcSettled ?? null
      const asked = txn.srcAmount
      const outcome = arrived === null || asked === undefined ? 'exact' : amountOutcome(asked, arrived)
      if (arrived === null || outcome === 'exact') return { state: 'paid' }
      return { state: 'paid', paid: { outcome, arrived: arrived.toString() } }
    }
    default:
      return { state: 'expired' }
  }
}

/**
 * Confirmations of the payment as the deposit watcher last counted them from the node
 * (`src_details.confirmations`, see onchain/deposits.ts), capped at the number required: the
 * receive completes as soon as it has them.
 */
function confirmationsOf(srcDetails: Record<string, unknown>, need: number): { have: number; need: number } {
  const counted = Number(srcDetails.confirmations ?? 0)
  const have = Number.isSafeInteger(counted) && counted > 0 ? Math.min(counted, need) : 0
  return { have, need }
}

/** The payment URI (QR code and wallet link) and the text to copy of a bitcoin receive, from what confirm recorded. */
export function paymentOf(record: Pick<PageRecord, 'kind' | 'srcDetails' | 'srcAmount'>): {
  uri: string
  text: string
} {
  const d = record.srcDetails
  if (record.kind === 'ln_receive') {
    const invoice = String(d.paymentRequest)
    return { uri: `lightning:${invoice}`, text: invoice }
  }
  const address = String(d.address)
  const bip21 = typeof d.invoice === 'string' && /^bitcoin:/i.test(d.invoice) ? d.invoice : undefined
  return {
    uri: bip21 ?? buildBip21({ address, amountBtc: formatMinor(record.srcAmount, 'BTC') }),
    text: address,
  }
}

/** Exact decimal text of `minor` units with all of the currency's decimals: 2370 USD cents is `23.70`. */
export function fiatText(minor: bigint, ccy: string): string {
  const precision = precisionOf(ccy)
  if (precision === 0) return minor.toString()
  const digits = minor.toString().padStart(precision + 1, '0')
  return `${digits.slice(0, -precision)}.${digits.slice(-precision)}`
}

/**
 * The value of `amountSats` in `ccy` at the current rate, rounded down to the currency's minor
 * unit; undefined when no fresh rate is available (the page then shows no fiat value rather than a
 * stale one).
 */
export async function fiatValue(
  rates: RatesService,
  ccy: string,
  amountSats: bigint,
): Promise<{ ccy: string; amount: string } | undefined> {
  try {
    const snapshot = await rates.current()
    const minor = convertDown(amountSats, 'BTC', ccy, rates.perBtc(snapshot, ccy))
    return { ccy, amount: fiatText(minor, ccy) }
  } catch {
    return undefined
  }
}

/** Everything the invoice page shows, built from the receive and nothing else. */
export function buildInvoicePageView(
  pageId: string,
  record: PageRecord,
  opts: { confirmationsNeeded: number; fiat?: { ccy: string; amount: string } | undefined },
): InvoicePageView {
  const status = pageStatusOf(record, opts.confirmationsNeeded)
  const base = {
    pageId,
    merchantName: record.merchantName,
    expiresAtMs: record.expiresAtMs,
    state: status.state,
    ...(status.paid ? { paid: status.paid } : {}),
  }
  if (record.kind === 'vnd_receive') return { ...base, kind: 'vietqr', ...bankTransferOf(record.srcDetails) }
  const payment = paymentOf(record)
  const view: BitcoinPageView = {
    ...base,
    kind: record.kind === 'ln_receive' ? 'lightning' : 'onchain',
    amountBtc: formatMinor(record.srcAmount, 'BTC'),
    amountSats: record.srcAmount.toString(),
    paymentUri: payment.uri,
    paymentText: payment.text,
  }
  if (opts.fiat) view.fiat = opts.fiat
  if (status.confirmations) view.confirmations = status.confirmations
  return view
}

/**
 * The bank transfer a VND receive asks for, as its confirm recorded it (src_details: bankBin,
 * bankName, bankAcctNum, accountName, amount in whole đồng, memo, vietQr). Only these fields are
 * read; the renderer checks that the QR payload encodes exactly them.
 */
function bankTransferOf(
  d: Record<string, unknown>,
): Pick<
  VietQrPageView,
  'bankBin' | 'bankName' | 'accountNumber' | 'accountName' | 'amountVnd' | 'memo' | 'vietQr'
> {
  return {
    bankBin: String(d.bankBin),
    bankName: String(d.bankName),
    accountNumber: String(d.bankAcctNum),
    accountName: String(d.accountName),
    amountVnd: String(d.amount),
    memo: String(d.memo),
    vietQr: String(d.vietQr),
  }
}

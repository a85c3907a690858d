import { assert } from '../shared/assert.js'

/**
 * The state of a hosted invoice page as the payer sees it, and the one message shape of the page's
 * public stream. The stream is read without credentials by anyone who has the link, so it carries
 * this and nothing else: no transaction id, account, wallet or fees. The one amount it may carry is
 * what the payer's own payment delivered, once a receive completed with another amount than it
 * asked for (the page shows the amount asked already).
 */

export type PageState = 'awaiting_payment' | 'seen' | 'paid' | 'expired'

export const PAGE_STATES: readonly PageState[] = ['awaiting_payment', 'seen', 'paid', 'expired']

export interface Confirmations {
  have: number
  need: number
}

/**
 * A receive paid short or over (contract section 11): it completed with what arrived, which is not
 * what it asked for. The same rule decides it as decides the transaction's `msg`.
 */
export interface PaidAmount {
  outcome: 'underpaid' | 'overpaid'
  /** What arrived, integer text in the page's minor unit: sats, or đồng for a VND receive. */
  arrived: string
}

/** Data of an `event: status` message on the page stream. */
export interface PageStatus {
  state: PageState
  /** On-chain only, once the payment is seen: blocks confirmed so far and blocks required. */
  confirmations?: Confirmations
  /** Paid only, and only when what arrived differs from what was asked. */
  paid?: PaidAmount
}

/** Paid and expired pages never change again; the stream closes after sending one of them. */
export function isFinalPageState(state: PageState): boolean {
  return state === 'paid' || state === 'expired'
}

export function isPageState(value: unknown): value is PageState {
  return typeof value === 'string' && (PAGE_STATES as readonly string[]).includes(value)
}

const CONFIRMATIONS_MAX = 1000

export function isValidConfirmations(c: Confirmations): boolean {
  const count = (n: number) => Number.isSafeInteger(n) && n >= 0 && n <= CONFIRMATIONS_MAX
  return count(c.have) && count(c.need) && c.need > 0
}

export function isValidPaidAmount(p: PaidAmount): boolean {
  return (p.outcome === 'underpaid' || p.outcome === 'overpaid') && /^\d{1,20}$/.test(p.arrived)
}

/**
 * Copy only the public fields, so an object that carries more (a transaction row, say) cannot leak
 * through the stream by accident.
 */
export function publicPageStatus(status: PageStatus): PageStatus {
  assert(isPageState(status.state), `unknown page state ${String(status.state)}`)
  const out: PageStatus = { state: status.state }
  if (status.confirmations) {
    assert(isValidConfirmations(status.confirmations), 'confirmations out of range')
    out.confirmations = { have: status.confirmations.have, need: status.confirmations.need }
  }
  if (status.paid) {
    assert(status.state === 'paid' && isValidPaidAmount(status.paid), 'paid amount out of place or shape')
    out.paid = { outcome: status.paid.outcome, arrived: status.paid.arrived }
  }
  return out
}

/** One server-sent event for the page stream, ready to write: `event: status` and its JSON data. */
export function pageStatusEvent(status: PageStatus): string {
  return `event: status\ndata: ${JSON.stringify(publicPageStatus(status))}\n\n`
}

import { assert } from '../shared/assert.js'

/**
 * The state of a hosted invoice page as the payer sees it, and the one message shape of the page's
 * public stream. The stream is read without credentials by anyone who has the link, so it carries
 * this and nothing else: no transaction id, account, wallet, amounts or fees.
 */

export type PageState = 'awaiting_payment' | 'seen' | 'paid' | 'expired'

export const PAGE_STATES: readonly PageState[] = ['awaiting_payment', 'seen', 'paid', 'expired']

export interface Confirmations {
  have: number
  need: number
}

/** Data of an `event: status` message on the page stream. */
export interface PageStatus {
  state: PageState
  /** On-chain only, once the payment is seen: blocks confirmed so far and blocks required. */
  confirmations?: Confirmations
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
  return out
}

/** One server-sent event for the page stream, ready to write: `event: status` and its JSON data. */
export function pageStatusEvent(status: PageStatus): string {
  return `event: status\ndata: ${JSON.stringify(publicPageStatus(status))}\n\n`
}

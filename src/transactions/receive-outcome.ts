/**
 * The one rule for a receive that completes with a different amount than it asked for (contract
 * section 11), on every rail: Lightning (an invoice of ours overpaid on the node), on-chain (a
 * short or large payment to the receive's address), VND (a bank transfer of another amount), and a
 * Lightning Address payment into a wallet of any currency. The receive completes with what arrived
 * (`srcSettledMinor`) and says how that compares with what it asked for in `msg`; the webhook, the
 * event stream and the hosted page all read it from there.
 *
 * Both amounts are the rail's, in its currency: what the payer was asked to pay (the receive's
 * source amount, fees included) and what the rail delivered. A receive into another wallet is
 * judged on what was paid, not on what the conversion credited: the payer paid in the rail's
 * currency, and the wallet's amount moves with the rate and the rounding.
 */

export type AmountOutcome = 'exact' | 'underpaid' | 'overpaid'

/** How what arrived compares with what the receive asked for, both in the rail's minor units. */
export function amountOutcome(asked: bigint, arrived: bigint): AmountOutcome {
  return arrived === asked ? 'exact' : arrived < asked ? 'underpaid' : 'overpaid'
}

/** The `msg` a receive completes with: '' when exactly what was asked arrived. */
export function receiveCompletionMsg(asked: bigint, arrived: bigint): '' | 'underpaid' | 'overpaid' {
  const outcome = amountOutcome(asked, arrived)
  return outcome === 'exact' ? '' : outcome
}

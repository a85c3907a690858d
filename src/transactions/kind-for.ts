/**
 * Which declared kind serves a create request's method pair, or the contract's refusal. The
 * refusals are part of the API and their precedence is pinned (kind-for.test.ts, the HTTP tests):
 * an announced method first (coming soon), then a currency that does not exist, then the rules of
 * the one pair the two methods name, then the fallbacks for methods that fit no pair.
 */
import { ApiError, fieldError } from '../shared/errors.js'
import { isCurrency } from '../shared/currency.js'
import type { CreateInput } from './flow.js'
import type { TxnKind } from './state-machine.js'

/** One side of a method pair. */
export interface PairSide {
  method: string
  /** The currencies this side carries; 'any' for every known currency. */
  ccys: readonly string[] | 'any'
  /**
   * Whether the side's currency must be one the service keeps wallets in (WALLET_CURRENCIES);
   * refused with "has no wallets on this service" (or `refusal`) when it is not.
   */
  wallet: boolean
  /**
   * The issue a currency outside `ccys` is refused with once the methods have chosen this pair.
   * Without it, such a currency does not fit the pair and the request gets the generic refusal.
   */
  refusal?: string
}

/** A source and a destination method a create request may name, and what each side carries. */
export interface MethodPair {
  source: PairSide
  dest: PairSide
  /** Whether the two sides must be in different currencies (a swap), and the issue when they are not. */
  distinct?: string
}

/** A method a request may name that has no kind yet: refused before anything else. */
export interface AnnouncedMethod {
  method: string
  message: string
  issue: string
}

const NO_WALLETS = 'has no wallets on this service'

type Field = 'sourceReq' | 'destReq'

export function kindForPairs(
  pairs: ReadonlyArray<{ kind: TxnKind; pair: MethodPair }>,
  announced: readonly AnnouncedMethod[],
  input: CreateInput,
  walletCurrencies: readonly string[],
): TxnKind {
  const s = input.sourceReq
  const d = input.destReq
  for (const [side, field] of [
    [s, 'sourceReq'],
    [d, 'destReq'],
  ] as const) {
    const soon = announced.find((a) => a.method === side.method)
    if (soon)
      throw new ApiError('method_not_available', soon.message, [
        { field: `${field}.method`, issue: soon.issue },
      ])
    if (!isCurrency(side.ccy))
      throw fieldError('unsupported_currency_pair', `${field}.ccy`, 'is not a known currency')
  }
  const found = pairs.find(({ pair }) => pair.source.method === s.method && pair.dest.method === d.method)
  if (found && fits(found.pair, s.ccy, d.ccy)) {
    check(found.pair, s.ccy, d.ccy, walletCurrencies)
    return found.kind
  }
  // The methods in the order the kinds declare them (the order the refusal lists them in).
  const known = [...new Set(pairs.flatMap(({ pair }) => [pair.source.method, pair.dest.method]))]
  if (!known.includes(s.method))
    throw fieldError('unsupported_method', 'sourceReq.method', `is not a known method (${known.join(', ')})`)
  if (!known.includes(d.method))
    throw fieldError('unsupported_method', 'destReq.method', `is not a known method (${known.join(', ')})`)
  if (found)
    throw new ApiError(
      'unsupported_currency_pair',
      `${s.method} to ${d.method} does not carry this pair of currencies`,
    )
  throw new ApiError('unsupported_method', `Moving from ${s.method} to ${d.method} is not supported`, [
    { field: 'destReq.method', issue: `not supported with sourceReq.method ${s.method}` },
  ])
}

/** Whether the currencies select this pair: a side with its own refusal takes any and checks later. */
function fits(pair: MethodPair, srcCcy: string, destCcy: string): boolean {
  const selects = (side: PairSide, ccy: string) =>
    side.refusal !== undefined || side.ccys === 'any' || side.ccys.includes(ccy)
  return selects(pair.source, srcCcy) && selects(pair.dest, destCcy)
}

/**
 * The rules of the chosen pair, in the order the contract's refusals take: two different currencies,
 * then the destination's currency, then the source's, then the wallets, source first.
 */
function check(pair: MethodPair, srcCcy: string, destCcy: string, walletCurrencies: readonly string[]): void {
  if (pair.distinct !== undefined && srcCcy === destCcy)
    throw fieldError('unsupported_currency_pair', 'destReq.ccy', pair.distinct)
  const sides: ReadonlyArray<[PairSide, string, Field]> = [
    [pair.source, srcCcy, 'sourceReq'],
    [pair.dest, destCcy, 'destReq'],
  ]
  for (const [side, ccy, field] of [...sides].reverse()) {
    if (side.refusal !== undefined && side.ccys !== 'any' && !side.ccys.includes(ccy))
      throw fieldError('unsupported_currency_pair', `${field}.ccy`, side.refusal)
  }
  for (const [side, ccy, field] of sides) {
    if (side.wallet && !walletCurrencies.includes(ccy))
      throw fieldError('unsupported_currency_pair', `${field}.ccy`, side.refusal ?? NO_WALLETS)
  }
}

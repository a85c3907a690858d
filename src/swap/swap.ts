import type { Queryable } from '../db/db.js'
import type { Config } from '../config/config.js'
import type { RatesService } from '../rates/service.js'
import { allInRate } from '../rates/fx.js'
import { assert } from '../shared/assert.js'
import { knownWalletIdPair, readWalletIdPair, type WalletIds } from '../ledger/ledger.js'
import { SWAP } from './kinds.js'
import type { Flow, QuoteContext, Settlement } from '../transactions/flow.js'
import type { Txn } from '../transactions/txn.js'
import { requestedAmount, walletAmounts, walletOutPostings } from '../transactions/money.js'
import { isMoneyError } from '../transactions/errors.js'

export interface SwapDeps {
  config: Config
  rates: RatesService
  walletIds: WalletIds
}

/** Swap between two wallets of one account: confirm settles at once at the quoted rate. */
export function swapFlow(options: Omit<SwapDeps, 'walletIds'> & { walletIds?: WalletIds }): Flow {
  const deps: SwapDeps = { ...options, walletIds: options.walletIds ?? new Map() }
  return {
    kind: SWAP.kind,
    quote: (ctx) => quoteSwap(deps, ctx),
    settlement: (q, txn, now) => swapSettlement(deps, q, txn, now),
  }
}

export async function quoteSwap(deps: SwapDeps, { input, rates }: QuoteContext) {
  const src = input.sourceReq.ccy
  const dest = input.destReq.ccy
  const fx = allInRate(deps.rates.perBtc(rates, src), deps.rates.perBtc(rates, dest), deps.config.fxSpreadBps)
  const requested = requestedAmount(input)
  if (isMoneyError(requested)) return requested
  const amounts = walletAmounts({
    requested,
    srcCcy: src,
    destCcy: dest,
    fx,
    feeRule: deps.config.fees.swap!,
    networkFee: 0n,
    deduct: input.deductNetworkFeesFromDest,
  })
  if (isMoneyError(amounts)) return amounts
  return { ...amounts, srcNetworkFee: 0n, fxRate: fx, srcDetails: {}, destDetails: {}, fromWallet: true }
}

/** The swap's confirm: one journal entry from the source wallet to the destination wallet. */
export async function swapSettlement(
  deps: Pick<SwapDeps, 'walletIds'>,
  q: Queryable,
  txn: Txn,
  now: number,
): Promise<Settlement> {
  const [from, to] = await swapWallets(deps.walletIds, q, txn)
  return {
    entry: {
      txnId: txn.id,
      kind: 'swap',
      now,
      settleHolds: true,
      postings: walletOutPostings(txn, from, { wallet: to }),
    },
    to: 'completed',
    patch: { srcSettledMinor: txn.srcAmountMinor, destSettledMinor: txn.destAmountMinor },
  }
}

/** The swap's two wallets: remembered ones without a read, else both in one statement. */
export async function swapWallets(
  walletIds: WalletIds,
  q: Queryable,
  txn: Pick<Txn, 'accountId' | 'srcCcy' | 'destCcy'>,
): Promise<[string, string]> {
  const known = knownWalletIdPair(walletIds, txn.accountId, [txn.srcCcy, txn.destCcy])
  if (known) return known
  const [from, to] = await readWalletIdPair(walletIds, q, txn.accountId, [txn.srcCcy, txn.destCcy])
  assert(from && to, 'swap wallets exist')
  return [from, to]
}

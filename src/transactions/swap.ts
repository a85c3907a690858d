import type { Config } from '../config/config.js'
import type { AccountsService } from '../accounts/service.js'
import type { RatesService } from '../rates/service.js'
import { allInRate } from '../rates/fx.js'
import { assert } from '../shared/assert.js'
import type { Flow } from './flow.js'
import { requestedAmount, walletAmounts, walletOutPostings } from './money.js'
import { isMoneyError } from './errors.js'

/** Swap between two wallets of one account: confirm settles at once at the quoted rate. */
export function swapFlow(deps: { config: Config; rates: RatesService; accounts: AccountsService }): Flow {
  return {
    kind: 'swap',
    async quote({ input, rates }) {
      const src = input.sourceReq.ccy
      const dest = input.destReq.ccy
      const fx = allInRate(
        deps.rates.perBtc(rates, src),
        deps.rates.perBtc(rates, dest),
        deps.config.fxSpreadBps,
      )
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
    },
    async settlement(q, txn, now) {
      const from = await deps.accounts.walletIdFor(q, txn.accountId, txn.srcCcy)
      const to = await deps.accounts.walletIdFor(q, txn.accountId, txn.destCcy)
      assert(from && to, 'swap wallets exist')
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
    },
  }
}

import { describe, expect, it } from 'vitest'
import type { CreateInput } from '../transactions/flow.js'
import { receiveQuote } from './receive-quote.js'
import type { MoneyError } from '../transactions/errors.js'
import { asAccountId } from '../shared/ids.js'

/** The quote of a receive alone: the fee sits between what the payer pays and what the wallet gets. */

const receive = (src: { amtRequested?: string }, dest: { amtRequested?: string }): CreateInput => ({
  accountId: asAccountId('acc_x'),
  deductNetworkFeesFromDest: false,
  sourceReq: { ccy: 'BTC', method: 'lightning', ...src },
  destReq: { ccy: 'BTC', method: 'svcpay', ...dest },
})
const rule = { fixedMinor: 10n, bps: 100n }

describe('receiveQuote', () => {
  it('adds the fee to a destination amount and takes it out of a source amount', () => {
    expect(receiveQuote(receive({}, { amtRequested: '0.00001' }), rule, {})).toMatchObject({
      srcAmount: 1_020n,
      srcFee: 20n,
      destAmount: 1_000n,
      fromWallet: false,
    })
    expect(receiveQuote(receive({ amtRequested: '0.00001' }, {}), rule, {})).toMatchObject({
      srcAmount: 1_000n,
      srcFee: 20n,
      destAmount: 980n,
    })
  })

  it('refuses a source amount the fee takes entirely, and passes on a refused amtRequested', () => {
    expect(receiveQuote(receive({ amtRequested: '0.0000001' }, {}), rule, {})).toEqual<MoneyError>({
      kind: 'money_error',
      code: 'amount_below_fees',
      field: 'sourceReq.amtRequested',
      reason: 'is too small to cover the receive fee',
    })
    expect(receiveQuote(receive({}, {}), rule, {})).toMatchObject({ code: 'amount_missing' })
  })
})

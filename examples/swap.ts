// Swap BTC to USDT inside the account: quote, review the rate and fees, confirm.
import { SvcpayClient } from '@svcpay/sdk'

const svcpay = SvcpayClient.fromEnv()

// Sandbox only: test money to swap.
await svcpay.sandbox.fund({ ccy: 'BTC', amount: '0.01' })

// The source amount is given, so the quote computes what arrives. Amounts are exact decimal strings;
// a bigint (100_000n) would be taken as minor units (sats) instead.
const quote = await svcpay.createTransaction({
  extRefId: `swap-${Date.now()}`,
  sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.001', reqDetails: {} },
  destReq: { ccy: 'USDT', method: 'svcpay', reqDetails: {} },
})
console.log(`quote: ${quote.sourceReq.amtRequested} BTC -> ${quote.destReq.amtRequested} USDT`)
console.log(
  `rate ${quote.fxRate} USDT/BTC, fee ${quote.sourceReq.svcpayFees} BTC, valid until ${new Date(quote.sourceReq.expiresAt).toISOString()}`,
)

// A swap settles at once on confirm.
const done = await svcpay.confirmTransaction(quote.txnId)
console.log('state:', done.txnState)
for (const w of await svcpay.listWallets()) {
  if (w.ccy === 'BTC' || w.ccy === 'USDT')
    console.log(`${w.ccy} wallet: ${w.availableBalance} available of ${w.amount}`)
}

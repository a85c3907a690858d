// Send BTC on-chain to an external address and follow it until it is confirmed.
import { SvcpayClient, SvcpayValidationError } from '@svcpay/sdk'

const { SANDBOX = 'true' } = process.env
const svcpay = SvcpayClient.fromEnv()
// A regtest address, as the sandbox runs on regtest; use one of your own network elsewhere.
const address = process.env.DEST_ADDRESS ?? 'bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080'

if (SANDBOX === 'true') await svcpay.sandbox.fund({ ccy: 'BTC', amount: '0.01' })

// Amounts below the minimum (0.00001 BTC) or a bad address are refused with the field named.
try {
  await svcpay.createTransaction({
    sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
    destReq: { ccy: 'BTC', method: 'on-chain', amtRequested: '0.000001', reqDetails: { address } },
  })
} catch (err) {
  if (!(err instanceof SvcpayValidationError)) throw err
  console.log(`refused: ${err.code} (${err.details.map((d) => d.field).join(', ')})`)
}

// The quote shows the fees; the wallet is debited amtRequested + svcpayFees + networkFees.
const quote = await svcpay.createTransaction({
  extRefId: `payout-${Date.now()}`,
  sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
  destReq: { ccy: 'BTC', method: 'on-chain', amtRequested: '0.001', reqDetails: { address } },
})
const { svcpayFees, networkFees } = quote.sourceReq
console.log(`sending ${quote.destReq.amtRequested} BTC, fees ${svcpayFees} + ${networkFees} BTC`)
await svcpay.confirmTransaction(quote.txnId)

// srccreated (held) -> destsent (broadcast, txid known) -> completed (confirmed).
for await (const event of svcpay.streamTransaction(quote.txnId)) {
  console.log('state:', event.txnState, event.msg)
  if (event.txnState === 'destsent') {
    const sent = await svcpay.getTransaction(quote.txnId)
    console.log('txid:', sent.destReq.reqDetails.txid)
    if (SANDBOX === 'true') await svcpay.sandbox.mine(1) // sandbox only: confirm it
  }
}

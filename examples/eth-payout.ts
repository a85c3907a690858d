// Pay out USDT over Ethereum (method eth) from the USDT wallet, and follow it until it is final.
import { SvcpayClient } from '@svcpay/sdk'

const svcpay = SvcpayClient.fromEnv()
if ((process.env.SANDBOX ?? 'true') === 'true') await svcpay.sandbox.fund({ ccy: 'USDT', amount: '50' })

const quote = await svcpay.createTransaction({
  sourceReq: { ccy: 'USDT', method: 'svcpay', reqDetails: {} },
  destReq: {
    ccy: 'USDT',
    method: 'eth',
    amtRequested: '25',
    // All lower case, all upper case or EIP-55 mixed case; a mistyped checksum is invalid_address.
    reqDetails: { address: process.env.ETH_ADDRESS ?? '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed' },
  },
})
const { svcpayFees, networkFees } = quote.sourceReq
console.log(`paying 25 USDT to ${quote.destReq.reqDetails.address}, fees ${svcpayFees} + ${networkFees} USDT`)
await svcpay.confirmTransaction(quote.txnId)

const done = await svcpay.waitForTransaction(quote.txnId, { timeoutMs: 60_000 })
console.log('state:', done.txnState, done.msg, 'txHash:', done.destReq.reqDetails.txHash ?? '-')

// Receive 0.0001 BTC over Lightning; a verified webhook says when it is paid.
import { createServer } from 'node:http'
import { SvcpayClient, verifyWebhook } from '@svcpay/sdk'

const { WEBHOOK_PORT = '4000' } = process.env
const svcpay = SvcpayClient.fromEnv()
const secret = crypto.randomUUID()

// The receiver checks the signature over the exact body bytes before it trusts the event.
const receiver = createServer(async (req, res) => {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk)
  const event = await verifyWebhook(Buffer.concat(chunks), req.headers, secret).catch(() => undefined)
  res.writeHead(event ? 200 : 401).end()
  console.log('webhook:', event?.txnState ?? 'rejected')
  if (event?.txnState === 'completed' && event.txnId === txn.txnId) receiver.close()
}).listen(Number(WEBHOOK_PORT))
await svcpay.createWebhook({ callback: `http://127.0.0.1:${WEBHOOK_PORT}/svcpay`, secret })

// Ask for 0.0001 BTC into the BTC wallet; confirming the quote issues the BOLT11 invoice.
const quote = await svcpay.createTransaction({
  sourceReq: { ccy: 'BTC', method: 'lightning', reqDetails: {} },
  destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.0001', reqDetails: {} },
})
const txn = await svcpay.confirmTransaction(quote.txnId)
console.log('invoice:', txn.sourceReq.reqDetails.paymentRequest)

// Sandbox only: play the payer. In production, show the invoice or txn.sourceReq.reqDetails.invoicePageUrl.
await svcpay.sandbox.payInvoice(String(txn.sourceReq.reqDetails.paymentRequest))

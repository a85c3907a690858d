// A webhook receiver: registers itself, then verifies and logs every delivery. It accepts both
// delivery variants (POST with X-Svcpay-Signature, PUT with X-Svc-Signature) and answers a bad
// signature with 401. Deliveries can repeat: act on each (txnId, txnState) once.
import { createServer } from 'node:http'
import { SvcpayClient, SvcpayWebhookError, verifyWebhook } from '@svcpay/sdk'

const { PORT = '4000' } = process.env
const secret = process.env.WEBHOOK_SECRET ?? crypto.randomUUID()
// The address svcpay can reach this receiver at; https in production.
const callback = process.env.WEBHOOK_URL ?? `http://127.0.0.1:${PORT}/svcpay/webhook`
const seen = new Set<string>()

const server = createServer(async (req, res) => {
  if (req.method !== 'POST' && req.method !== 'PUT') return res.writeHead(405).end()
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk)
  try {
    // Verify the raw bytes first; parse nothing before this.
    const event = await verifyWebhook(Buffer.concat(chunks), req.headers, secret)
    res.writeHead(200).end()
    const key = `${event.txnId}:${event.txnState}`
    if (seen.has(key)) return console.log('duplicate:', key)
    seen.add(key)
    console.log(
      `event: ${event.txnId} ${event.txnState}${event.msg ? ` (${event.msg})` : ''} [${req.method}]`,
    )
  } catch (err) {
    res.writeHead(err instanceof SvcpayWebhookError ? err.status : 500).end()
    console.log('rejected:', (err as Error).message)
  }
})
server.listen(Number(PORT), () => console.log(`listening on ${callback}`))

// With SVCPAY_API_KEY and SVCPAY_API_SECRET set, the receiver registers itself as the account's webhook.
if (process.env.SVCPAY_API_KEY) {
  const hook = await SvcpayClient.fromEnv().createWebhook({ callback, secret })
  console.log(`registered webhook ${hook.id}`)
}

/**
 * The HTTP ceiling: the smallest Fastify app, one GET route answering a small JSON object, no
 * logging, in its own process. It prints `listening <port>` once ready.
 */
import Fastify from 'fastify'

const app = Fastify({ logger: false })
app.get('/bare', async () => ({ ok: true }))
const address = await app.listen({ port: 0, host: '127.0.0.1' })
process.stdout.write(`listening ${new URL(address).port}\n`)
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)))

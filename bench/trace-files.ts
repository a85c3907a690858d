/**
 * Which files of ours a request passes through: builds the service in this process on PGlite,
 * warms it up, then asks V8 for precise coverage (call counts per function) around one swap
 * confirm and around one Lightning send's completion by the worker, and prints every file under
 * src/ in which a function ran (with --verbose, which functions). This is the count
 * docs/architecture.md gives for each path; it is measured, not read off the code.
 *
 *   npx tsx bench/trace-files.ts [--verbose]
 *
 * src/db (statements are rendered and sent there, as every request passes through Fastify) is
 * shown apart, as are the per-request checks of the HTTP layer (auth, rate limits) that every
 * route shares.
 */
import { Session } from 'node:inspector/promises'
import { relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { asAccountId, asTxnId } from '../src/shared/ids.js'
import { runDueTransactions } from '../src/transactions/worker.js'
import { startInProcess } from './lib/in-process.js'
import { SWAP_BODY } from './scenarios/swaps.js'

const SRC = resolve(fileURLToPath(new URL('../src', import.meta.url)))
const verbose = process.argv.includes('--verbose')

/** The files of src/ in which a function ran since the last take, with the functions that ran. */
async function takeFiles(session: Session): Promise<Map<string, string[]>> {
  const { result } = await session.post('Profiler.takePreciseCoverage')
  const files = new Map<string, string[]>()
  for (const script of result) {
    if (!script.url.startsWith('file://')) continue
    const path = fileURLToPath(script.url)
    if (!path.startsWith(SRC + '/')) continue
    // The function whose range starts at 0 is the module itself, run once at load: not a call.
    const ran = script.functions
      .filter((f) => f.ranges[0]!.startOffset > 0 && f.ranges[0]!.count > 0)
      .map((f) => f.functionName || '(anonymous)')
    if (ran.length > 0) files.set(relative(SRC, path), [...new Set(ran)])
  }
  return files
}

// What every request passes through, whatever it asks: the database layer, the HTTP layer's
// hooks (authentication, rate limits, the admin guard's check that this is no admin route).
const SHARED_PER_REQUEST = /^(db\/|http\/|auth\/|admin\/guard|operators\/guard|shared\/scoped-storage|logger)/
// Small helpers of src/shared (assertions, currency precision, amount text), counted apart.
const UTILITIES = /^shared\//

function report(label: string, files: Map<string, string[]>): void {
  const all = [...files].sort()
  const ours = all.filter(([f]) => !SHARED_PER_REQUEST.test(f) && !UTILITIES.test(f))
  const names = (re: RegExp) =>
    all
      .filter(([f]) => re.test(f))
      .map(([f]) => f)
      .join(', ')
  console.log(`${label}: ${ours.length} files of ours`)
  for (const [f, ran] of ours) console.log(`  ${f}${verbose ? `: ${ran.join(', ')}` : ''}`)
  console.log(`  helpers of src/shared: ${names(UTILITIES)}`)
  console.log(`  as every request: ${names(SHARED_PER_REQUEST)}`)
}

async function main(): Promise<void> {
  const service = await startInProcess()
  const { c, call, token, adminToken, accountId } = service
  const session = new Session()
  session.connect()
  try {
    const invoice = async () =>
      (await call('POST', '/admin/sandbox/lightning/invoice', adminToken, { amount: '0.00001' }))
        .paymentRequest
    const lnSend = async () =>
      call('POST', '/api/v2/transaction', token, {
        sourceReq: { method: 'svcpay', ccy: 'BTC' },
        destReq: { method: 'lightning', ccy: 'BTC', reqDetails: { paymentRequest: await invoice() } },
      })
    // Warm every path once, so that what is measured is a request as it runs under load.
    for (let i = 0; i < 2; i++) {
      const warm = await call('POST', '/api/v2/transaction', token, JSON.parse(SWAP_BODY))
      await call('PUT', `/api/v2/transaction/${warm.txnId}/confirm`, token)
      const send = await lnSend()
      await call('PUT', `/api/v2/transaction/${send.txnId}/confirm`, token)
      await runDueTransactions({
        db: c.db,
        transactions: c.transactions,
        log: console,
        now: () => Date.now() + 60_000,
      })
    }
    await session.post('Profiler.enable')
    await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false })

    const swap = await call('POST', '/api/v2/transaction', token, JSON.parse(SWAP_BODY))
    await takeFiles(session)
    await call('PUT', `/api/v2/transaction/${swap.txnId}/confirm`, token)
    report('swap confirm (PUT /api/v2/transaction/:txnId/confirm)', await takeFiles(session))

    const send = await lnSend()
    const confirmed = await call('PUT', `/api/v2/transaction/${send.txnId}/confirm`, token)
    await takeFiles(session)
    await runDueTransactions({
      db: c.db,
      transactions: c.transactions,
      log: console,
      now: () => Date.now() + 60_000,
    })
    const files = await takeFiles(session)
    const after = await c.transactions.get(asAccountId(accountId), asTxnId(send.txnId))
    report(`Lightning send completion (one worker pass; ${confirmed.txnState} → ${after.state})`, files)
  } finally {
    session.disconnect()
    await service.close()
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})

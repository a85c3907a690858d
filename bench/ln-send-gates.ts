/**
 * What the confirm gates of issue 31 add to a Lightning send: the service in this process on a
 * fresh PostgreSQL database, N sends (quote and confirm, to invoices of the sandbox's outside node)
 * with no limit set, then with the limits, the velocity rule, a hot-wallet cap and a screening list
 * all set, alternately, R rounds. Prints the Node process's CPU per send (PostgreSQL's is apart)
 * and the database statements per send, each round and their means.
 *
 *   npx tsx bench/ln-send-gates.ts [--sends=N] [--rounds=R]
 */
import { createPostgresDb, type Db, type Queryable } from '../src/db/db.js'
import { startInProcess } from './lib/in-process.js'
import { dropDatabase, recreateDatabase } from './lib/pg.js'

const arg = (name: string, dflt: number) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt)
const SENDS = arg('sends', 150)
const ROUNDS = arg('rounds', 3)
const DB_NAME = 'svcpay_bench_ln_gates'

/** Every setting the gates read, none of them near what the sends spend. */
const GATED = {
  LIMITS_STANDARD_PER_TRANSACTION: '100000',
  LIMITS_STANDARD_DAILY_OUTGOING: '10000000',
  LIMITS_STANDARD_MONTHLY_OUTGOING: '100000000',
  LIMITS_STANDARD_SENDS_PER_HOUR: '100000',
  HOT_WALLET_CAP_LIGHTNING_PER_HOUR: '1000',
}

let statements = 0
function counted(db: Db): Db {
  const wrap = (q: Queryable): Queryable => ({
    query(text, params) {
      statements++
      return q.query(text, params)
    },
    notify: (channel, payload) => q.notify(channel, payload),
  })
  return {
    engine: db.engine,
    ...wrap(db),
    tx: (fn) => db.tx((q) => fn(wrap(q))),
    listen: (channel, fn, opts) => db.listen(channel, fn, opts),
    close: () => db.close(),
  }
}

async function round(gated: boolean): Promise<{ cpuMs: number; statements: number }> {
  const base = createPostgresDb(await recreateDatabase(DB_NAME), { poolMax: 4 })
  const service = await startInProcess(counted(base), gated ? GATED : {})
  const { call, token, adminToken } = service
  try {
    if (gated) {
      // A screening list of one address nobody pays: every send is looked up in it.
      await call('PUT', '/admin/screening/lists/bench', adminToken, {
        list: 'bitcoin,bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080\n',
      })
    }
    const invoices: string[] = []
    for (let i = 0; i < SENDS + 5; i++)
      invoices.push(
        (await call('POST', '/sandbox/lightning/invoice', token, { amount: '0.00001' })).paymentRequest,
      )
    const send = async (paymentRequest: string) => {
      const q = await call('POST', '/api/v2/transaction', token, {
        sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
        destReq: { ccy: 'BTC', method: 'lightning', reqDetails: { paymentRequest } },
      })
      await call('PUT', `/api/v2/transaction/${q.txnId}/confirm`, token)
    }
    for (const inv of invoices.slice(0, 5)) await send(inv)
    statements = 0
    const cpu = process.cpuUsage()
    for (const inv of invoices.slice(5)) await send(inv)
    const used = process.cpuUsage(cpu)
    return { cpuMs: (used.user + used.system) / 1000 / SENDS, statements: statements / SENDS }
  } finally {
    await service.close()
    await base.close()
    await dropDatabase(DB_NAME)
  }
}

async function main(): Promise<void> {
  const off: Array<{ cpuMs: number; statements: number }> = []
  const on: typeof off = []
  for (let r = 0; r < ROUNDS; r++) {
    off.push(await round(false))
    on.push(await round(true))
    console.log(
      `round ${r + 1}: no gates ${off[r]!.cpuMs.toFixed(3)} ms, ${off[r]!.statements.toFixed(1)} statements; ` +
        `every gate set ${on[r]!.cpuMs.toFixed(3)} ms, ${on[r]!.statements.toFixed(1)} statements (per send)`,
    )
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length
  const a = mean(off.map((x) => x.cpuMs))
  const b = mean(on.map((x) => x.cpuMs))
  console.log(
    `mean Node CPU per Lightning send (quote + confirm): ${a.toFixed(3)} ms without, ${b.toFixed(3)} ms with ` +
      `every gate set (+${(b - a).toFixed(3)} ms); statements ${mean(off.map((x) => x.statements)).toFixed(1)} → ` +
      `${mean(on.map((x) => x.statements)).toFixed(1)}`,
  )
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})

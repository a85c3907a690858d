import { afterAll, describe, expect, it } from 'vitest'
import { createPostgresDb } from '../../src/db/db.js'
import { ENGINE } from '../helpers/harness.js'
import {
  createServiceStore,
  serviceClient,
  startServiceProcess,
  type ServiceProcess,
  type ServiceStore,
} from '../helpers/service-process.js'

/**
 * The limits are atomic with the hold (issue 31): thirty confirms of 100 USDT quotes, fired at once
 * at two API processes on one PostgreSQL database, against a daily limit of 1000 USDT. The limits
 * gate checks in the confirm's database transaction under a lock of the account, so exactly ten
 * pass, whichever instance each one reached, and the rest are refused 403 limit_exceeded with
 * nothing held. PostgreSQL only: the embedded engine is one process's by design.
 */
const ADDRESS = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'

describe.skipIf(ENGINE !== 'postgres')('limits across two API instances on PostgreSQL', () => {
  let store: ServiceStore | undefined
  const procs: ServiceProcess[] = []
  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop()))
    await store?.cleanup()
  })

  it('never lets parallel confirms on two instances pass a daily limit', { timeout: 180_000 }, async () => {
    store = await createServiceStore({
      QUOTE_TTL_S: '600',
      LIMITS_CCY: 'USDT',
      LIMITS_STANDARD_DAILY_OUTGOING: '1000',
      // No worker runs: the payouts stay srccreated, their funds held, and still count.
      SANDBOX_PAYOUT_DELAY_MS: '600000',
    })
    procs.push(await startServiceProcess(store.env, { role: 'api' }))
    procs.push(await startServiceProcess(store.env, { role: 'api' }))
    const [one, two] = procs.map((p) => serviceClient(p.base, store!.adminToken)) as [
      ReturnType<typeof serviceClient>,
      ReturnType<typeof serviceClient>,
    ]
    const a = await one.createAccount('Parallel sender')
    await one.admin('POST', '/admin/sandbox/fund', { accountId: a.accountId, ccy: 'USDT', amount: '10000' })
    const ids: string[] = []
    for (let i = 0; i < 30; i++) {
      const q = await (i % 2 ? two : one).call('POST', '/api/v2/transaction', a.token, {
        sourceReq: { ccy: 'USDT', method: 'svcpay', reqDetails: {} },
        destReq: { ccy: 'USDT', method: 'tron', amtRequested: '100', reqDetails: { address: ADDRESS } },
      })
      expect(q.status, JSON.stringify(q.body)).toBe(200)
      ids.push(q.body.txnId)
    }
    // Each confirm goes to the instance that did not make its quote, all at once.
    const answers = await Promise.all(
      ids.map((id, i) => (i % 2 ? one : two).call('PUT', `/api/v2/transaction/${id}/confirm`, a.token)),
    )
    const passed = answers.filter((r) => r.status === 200)
    const refused = answers.filter((r) => r.status === 403)
    expect(passed).toHaveLength(10)
    expect(refused).toHaveLength(20)
    for (const r of refused)
      expect(r.body.details[0]).toMatchObject({ limit: 'daily_outgoing', remaining: '0' })
    const db = createPostgresDb(store.databaseUrl!)
    try {
      const { rows } = await db.query<{ n: string; held: string }>(
        `SELECT count(*)::text AS n, COALESCE(sum(h.amount), 0)::text AS held
           FROM transactions t JOIN holds h ON h.txn_id = t.id
          WHERE t.account_id = $1 AND t.state <> 'quoted' AND h.status = 'pending'`,
        [a.accountId],
      )
      expect(rows[0]!.n).toBe('10')
      const limits = await one.call('GET', `/api/v2/account/${a.accountId}/limits`, a.token)
      expect(limits.body.data.limits).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ limit: 'daily_outgoing', used: '1000', remaining: '0' }),
        ]),
      )
    } finally {
      await db.close()
    }
  })
})

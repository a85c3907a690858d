import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, ENGINE, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { startEsploraStandin, type EsploraStandin } from '../../test/standins/esplora.js'
import { testSigner } from '../../test/standins/signer.js'
import { operatorClient } from '../../test/admin/operator-client.js'
import { historyProblems, moneyProblems } from '../../test/helpers/invariants.js'
import { createEsploraRail } from '../onchain/esplora/esplora.js'
import { FEE_WAIT_MAX_MS } from '../onchain/send-broadcast.js'
import { runDueTransactions } from '../transactions/worker.js'

const PAYEE = 'bcrt1qg975h6gdx5mryeac72h6lj2nzygugxhy5n57q2'

/**
 * An on-chain send that waited for its approval, on the Esplora adapter against the stand-in node
 * (test/standins/esplora.ts): it is sent once approved, and its wait for a network fee back within
 * the quote counts from the approval, not from a quote made long before.
 */
describe(`an approved on-chain send (${ENGINE})`, () => {
  let h: Harness
  let bob: TestAccount
  let node: EsploraStandin

  beforeAll(async () => {
    h = await createHarness({ APPROVAL_THRESHOLD_BTC: '0.0005' })
    bob = await h.createAccount({ name: 'Bob' })
    await h.fund(bob.accountId, 'BTC', '1')
    node = await startEsploraStandin()
    h.c.bitcoin.rails.onchain = createEsploraRail({
      url: node.url,
      network: 'regtest',
      timeoutMs: 500,
      broadcast: { sign: testSigner(node.chain).sign },
    })
  })
  afterAll(async () => {
    await node?.close()
    await h?.close()
  })

  const txn = async (id: string) =>
    (await h.c.db.query<any>('SELECT * FROM transactions WHERE id = $1', [id])).rows[0]
  const work = async () => {
    await h.c.db.query(`UPDATE transactions SET next_check_at = 0 WHERE state IN ('srccreated', 'destsent')`)
    await runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: console })
  }

  it('waits for a fee within its quote from its approval on, then fails without overpaying', async () => {
    node.feeEstimates = { '3': 10.1 }
    const q = await h.api('POST', '/api/v2/transaction', bob.token, {
      sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
      destReq: { ccy: 'BTC', method: 'on-chain', amtRequested: '0.001', reqDetails: { address: PAYEE } },
    })
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, bob.token)
    expect(c.body.txnState).toBe('processing')
    const id = q.body.txnId as string
    // The approval came long after the quote; the network wants more than the quote meanwhile.
    await h.c.db.query('UPDATE transactions SET created_at = created_at - $2 WHERE id = $1', [
      id,
      FEE_WAIT_MAX_MS * 4,
    ])
    node.feeEstimates = { '3': 30 }
    const admin = { authorization: `Bearer ${h.adminToken}`, 'content-type': 'application/json' }
    expect(
      (
        await h.app.inject({
          method: 'POST',
          url: `/admin/approvals/${id}/review`,
          headers: admin,
          payload: '{}',
        })
      ).statusCode,
    ).toBe(200)
    // A named operator approves what the token's operator reviewed.
    const client = operatorClient(h.app, h.adminToken)
    const finance = await client.signIn(await client.createOperator('finance'))
    const approved = await client.request('POST', `/admin/approvals/${id}/approve`, {
      session: finance,
      body: {},
    })
    expect(approved.status, approved.raw).toBe(200)

    await work()
    // Not failed for the hours it waited for approval: it waits for the fee as a fresh send would.
    expect((await txn(id)).state).toBe('srccreated')
    expect(node.chain.mempool.size).toBe(0)

    // Half an hour after the approval the network still wants more than the quote: it fails.
    await h.c.db.query('UPDATE approvals SET decided_at = decided_at - $2 WHERE txn_id = $1', [
      id,
      FEE_WAIT_MAX_MS,
    ])
    await work()
    const failed = await txn(id)
    expect([failed.state, failed.msg]).toEqual(['failed', 'network_fee_above_quote'])
    expect(node.chain.mempool.size).toBe(0)
    await h.expectBooksBalanced()
    expect(await moneyProblems(h.c.db)).toEqual([])
    expect(await historyProblems(h.c.db)).toEqual([])
  })
})

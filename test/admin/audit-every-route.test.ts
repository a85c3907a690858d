import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAppHarness, type AppHarness } from '../helpers/app-harness.js'
import { ENGINE } from '../helpers/harness.js'
import type { TestAccount } from '../helpers/harness.js'
import { ADMIN_ROUTES, isStateChanging } from '../../src/operators/permissions.js'
import { operatorClient, type Session } from './operator-client.js'
import { sha256 } from '../../src/operators/service.js'
import { runDueTransactions } from '../../src/transactions/worker.js'
import { runDueAddresses } from '../../src/onchain/deposits.js'

/**
 * Every state-changing route in ADMIN_ROUTES writes exactly one audit row when it succeeds, naming
 * the operator of the session, the client address and the request id. A new route needs a case
 * here (the first test says which are missing).
 */
type Case = () => Promise<{ url: string; body?: unknown; session?: Session }>
/** A route that cannot succeed against the sandbox rails: a refused attempt must leave no row. */
interface Unreachable {
  why: string
  refused: Case
}

const LISTED_BTC = 'bcrt1qg975h6gdx5mryeac72h6lj2nzygugxhy5n57q2'

describe(`an audit row for every admin change (${ENGINE})`, () => {
  let h: AppHarness
  let client: ReturnType<typeof operatorClient>
  let session: Session
  let owner: TestAccount
  let deliveryId: string

  const ours = async (method: 'lightning' | 'on-chain', amount: string) => {
    const q = await h.api('POST', '/api/v2/transaction', owner.token, {
      sourceReq: { ccy: 'BTC', method, reqDetails: {} },
      destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: amount, reqDetails: {} },
    })
    return (await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, owner.token)).body.sourceReq
      .reqDetails
  }

  /** A TRON payout above APPROVAL_THRESHOLD_USDT, confirmed: it waits in processing. */
  const waitingApproval = async () => {
    await client.asSystem('POST', '/admin/sandbox/fund', {
      accountId: owner.accountId,
      ccy: 'USDT',
      amount: '500',
    })
    const q = await h.api('POST', '/api/v2/transaction', owner.token, {
      sourceReq: { ccy: 'USDT', method: 'svcpay', reqDetails: {} },
      destReq: {
        ccy: 'USDT',
        method: 'tron',
        amtRequested: '150',
        reqDetails: { address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' },
      },
    })
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, owner.token)
    expect(c.body.txnState).toBe('processing')
    return q.body.txnId as string
  }

  /** A screening hit no operator has reviewed: a refused quote's, or a held deposit's. */
  const screeningHit = async (stage: 'quote' | 'deposit'): Promise<string> => {
    await client.asSystem('PUT', '/admin/screening/lists/every-route', { list: `bitcoin,${LISTED_BTC}` })
    if (stage === 'quote') {
      const q = await h.api('POST', '/api/v2/transaction', owner.token, {
        sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
        destReq: {
          ccy: 'BTC',
          method: 'on-chain',
          amtRequested: '0.001',
          reqDetails: { address: LISTED_BTC },
        },
      })
      expect(q.status).toBe(403)
    } else {
      const address = (await h.api('GET', '/api/v2/account/onchain-address', owner.token)).body
        .staticOnchainAddress
      await client.asSystem('POST', '/admin/sandbox/onchain/send', {
        address,
        amount: '0.0001',
        fromAddress: LISTED_BTC,
      })
      await runDueAddresses({ ...h.c.bitcoin, log: console })
    }
    const hits = await client.asSystem('GET', '/admin/screening/hits?unreviewed=true')
    const hit = hits.data.find((x: any) => x.stage === stage)
    expect(hit, stage).toBeDefined()
    return hit.id
  }

  const CASES: Record<string, Case | Unreachable> = {
    'POST /admin/accounts': async () => ({ url: '/admin/accounts', body: { name: 'Every route' } }),
    'PUT /admin/accounts/:accountId/tier': async () => ({
      url: `/admin/accounts/${owner.accountId}/tier`,
      body: { tier: 'premium' },
    }),
    // Limits (src/limits/routes.ts, issue 31): every change with its reason.
    'PUT /admin/accounts/:accountId/limits': async () => ({
      url: `/admin/accounts/${owner.accountId}/limits`,
      body: { tier: 'vip', reason: 'every route' },
    }),
    'PUT /admin/accounts/:accountId/limits/overrides': async () => ({
      url: `/admin/accounts/${owner.accountId}/limits/overrides`,
      body: { limit: 'daily_outgoing', amount: '100', reason: 'every route' },
    }),
    'DELETE /admin/accounts/:accountId/limits/overrides': async () => {
      await client.asSystem('PUT', `/admin/accounts/${owner.accountId}/limits/overrides`, {
        limit: 'per_transaction',
        amount: '5',
        reason: 'to remove',
      })
      return {
        url: `/admin/accounts/${owner.accountId}/limits/overrides`,
        body: { limit: 'per_transaction', reason: 'every route' },
      }
    },
    'POST /admin/accounts/:accountId/limits/allow-list': async () => ({
      url: `/admin/accounts/${owner.accountId}/limits/allow-list`,
      body: { destination: 'tron:TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', reason: 'every route' },
    }),
    'DELETE /admin/accounts/:accountId/limits/allow-list': async () => {
      await client.asSystem('POST', `/admin/accounts/${owner.accountId}/limits/allow-list`, {
        destination: 'btc:bcrt1qg975h6gdx5mryeac72h6lj2nzygugxhy5n57q2',
        reason: 'to remove',
      })
      return {
        url: `/admin/accounts/${owner.accountId}/limits/allow-list`,
        body: { destination: 'btc:bcrt1qg975h6gdx5mryeac72h6lj2nzygugxhy5n57q2', reason: 'every route' },
      }
    },
    'POST /admin/keys': async () => ({ url: '/admin/keys', body: { accountId: owner.accountId } }),
    'POST /admin/keys/:apiKey/revoke': async () => {
      const key = await client.asSystem('POST', '/admin/keys', { accountId: owner.accountId })
      return { url: `/admin/keys/${key.apiKey}/revoke`, body: {} }
    },
    'POST /admin/webhook/deliveries/:deliveryId/redeliver': async () => ({
      url: `/admin/webhook/deliveries/${deliveryId}/redeliver`,
      body: {},
    }),
    'POST /admin/operators': async () => ({
      url: '/admin/operators',
      body: { email: 'every@example.com', role: 'viewer' },
    }),
    'POST /admin/operators/:operatorId/disable': async () => {
      const op = await client.createOperator('viewer')
      return { url: `/admin/operators/${op.id}/disable`, body: {} }
    },
    'POST /admin/operators/:operatorId/role': async () => {
      const op = await client.createOperator('viewer')
      return { url: `/admin/operators/${op.id}/role`, body: { role: 'support' } }
    },
    'POST /admin/operators/:operatorId/enable': async () => {
      const op = await client.createOperator('viewer')
      await client.asSystem('POST', `/admin/operators/${op.id}/disable`, {})
      return { url: `/admin/operators/${op.id}/enable`, body: {} }
    },
    'POST /admin/operators/:operatorId/reset': async () => {
      const op = await client.createOperator('viewer')
      return { url: `/admin/operators/${op.id}/reset`, body: {} }
    },
    'DELETE /admin/session': async () => ({
      url: '/admin/session',
      session: await client.signIn(await client.createOperator('viewer')),
    }),
    'POST /admin/sessions/revoke-all': async () => ({
      url: '/admin/sessions/revoke-all',
      body: {},
      session: await client.signIn(await client.createOperator('viewer')),
    }),
    'POST /admin/sandbox/fund': async () => ({
      url: '/admin/sandbox/fund',
      body: { accountId: owner.accountId, ccy: 'BTC', amount: '0.001' },
    }),
    'POST /admin/sandbox/lightning/invoice': async () => ({
      url: '/admin/sandbox/lightning/invoice',
      body: { amount: '0.00001' },
    }),
    'POST /admin/sandbox/lightning/pay': async () => ({
      url: '/admin/sandbox/lightning/pay',
      body: { paymentRequest: (await ours('lightning', '0.00002')).paymentRequest },
    }),
    'POST /admin/sandbox/onchain/send': async () => ({
      url: '/admin/sandbox/onchain/send',
      body: { address: (await ours('on-chain', '0.00003')).address, amount: '0.00003' },
    }),
    'POST /admin/sandbox/drift/move': async () => ({
      url: '/admin/sandbox/drift/move',
      body: { rail: 'tron', direction: 'in', amount: '1' },
    }),
    'POST /admin/sandbox/drift/pay-invoice': async () => ({
      url: '/admin/sandbox/drift/pay-invoice',
      body: { paymentRequest: (await ours('lightning', '0.00002')).paymentRequest },
    }),
    'POST /admin/sandbox/drift/duplicate-deposit': async () => {
      // A completed Lightning receive: paid by the sandbox payer, then settled by the worker.
      const q = await h.api('POST', '/api/v2/transaction', owner.token, {
        sourceReq: { ccy: 'BTC', method: 'lightning', reqDetails: {} },
        destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.00002', reqDetails: {} },
      })
      const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, owner.token)
      await client.asSystem('POST', '/admin/sandbox/lightning/pay', {
        paymentRequest: c.body.sourceReq.reqDetails.paymentRequest,
      })
      for (let i = 0; i < 100; i++) {
        await runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: console })
        const t = await h.api('GET', `/api/v2/transaction/${q.body.txnId}`, owner.token)
        if (t.body.txnState === 'completed') break
        await new Promise((r) => setTimeout(r, 20))
      }
      return { url: '/admin/sandbox/drift/duplicate-deposit', body: { txnId: q.body.txnId } }
    },
    'POST /admin/sandbox/onchain/mine': async () => ({
      url: '/admin/sandbox/onchain/mine',
      body: { blocks: 1 },
    }),
    // The console's form posts (src/console/), sent here as JSON with the CSRF header.
    'POST /admin/console/sign-out': async () => ({
      url: '/admin/console/sign-out',
      body: {},
      session: await client.signIn(await client.createOperator('viewer')),
    }),
    'POST /admin/console/sign-out-everywhere': async () => ({
      url: '/admin/console/sign-out-everywhere',
      body: {},
      session: await client.signIn(await client.createOperator('viewer')),
    }),
    'POST /admin/console/accounts/:accountId/keys': async () => ({
      url: `/admin/console/accounts/${owner.accountId}/keys`,
      body: {},
    }),
    'POST /admin/console/accounts/:accountId/keys/:apiKey/revoke': async () => {
      const key = await client.asSystem('POST', '/admin/keys', { accountId: owner.accountId })
      return { url: `/admin/console/accounts/${owner.accountId}/keys/${key.apiKey}/revoke`, body: {} }
    },
    'POST /admin/console/accounts/:accountId/tier': async () => ({
      url: `/admin/console/accounts/${owner.accountId}/tier`,
      body: { tier: 'premium' },
    }),
    'POST /admin/console/transactions/:txnId/deliveries/:deliveryId/redeliver': async () => {
      const { rows } = await h.c.db.query(
        'SELECT e.txn_id FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE d.id = $1',
        [deliveryId],
      )
      return {
        url: `/admin/console/transactions/${rows[0].txn_id}/deliveries/${deliveryId}/redeliver`,
        body: {},
      }
    },
    'POST /admin/console/operators': async () => ({
      url: '/admin/console/operators',
      body: { email: 'console-every@example.com', role: 'viewer' },
    }),
    'POST /admin/console/operators/:operatorId/disable': async () => {
      const op = await client.createOperator('viewer')
      return { url: `/admin/console/operators/${op.id}/disable`, body: {} }
    },
    'POST /admin/console/operators/:operatorId/enable': async () => {
      const op = await client.createOperator('viewer')
      await client.asSystem('POST', `/admin/operators/${op.id}/disable`, {})
      return { url: `/admin/console/operators/${op.id}/enable`, body: {} }
    },
    'POST /admin/console/operators/:operatorId/role': async () => {
      const op = await client.createOperator('viewer')
      return { url: `/admin/console/operators/${op.id}/role`, body: { role: 'finance' } }
    },
    'POST /admin/console/operators/:operatorId/reset': async () => {
      const op = await client.createOperator('viewer')
      return { url: `/admin/console/operators/${op.id}/reset`, body: {} }
    },
    'POST /admin/console/reconciliation/run': async () => ({
      url: '/admin/console/reconciliation/run',
      body: {},
    }),
    'POST /admin/onchain/sends/:txnId/bumpfee': async () => {
      // A send out of our wallet, broadcast by the worker (destsent), whose fee the operator raises.
      const q = await h.api('POST', '/api/v2/transaction', owner.token, {
        sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
        destReq: {
          ccy: 'BTC',
          method: 'on-chain',
          amtRequested: '0.00002',
          reqDetails: { address: 'bcrt1qg975h6gdx5mryeac72h6lj2nzygugxhy5n57q2' },
        },
      })
      await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, owner.token)
      await runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: console })
      return { url: `/admin/onchain/sends/${q.body.txnId}/bumpfee`, body: { feeRate: 50 } }
    },
    'POST /admin/sandbox/vnd/transfer': async () => ({
      url: '/admin/sandbox/vnd/transfer',
      body: { memo: 'every route', amount: '10000' },
    }),
    'POST /admin/bank-credits/:creditId/assign': async () => {
      const credit = await client.asSystem('POST', '/admin/sandbox/vnd/transfer', {
        memo: 'no memo of ours',
        amount: '20000',
      })
      return {
        url: `/admin/bank-credits/${credit.creditId}/assign`,
        body: { accountId: owner.accountId, reason: 'every route' },
      }
    },
    'POST /admin/console/bank-credits/:creditId/assign': async () => {
      const credit = await client.asSystem('POST', '/admin/sandbox/vnd/transfer', {
        memo: 'no memo of ours either',
        amount: '30000',
      })
      return {
        url: `/admin/console/bank-credits/${credit.creditId}/assign`,
        body: { accountId: owner.accountId, reason: 'every route, from the console' },
      }
    },
    // Backup and recovery (src/admin/backup-routes.ts). The harness's database is in memory or on
    // PostgreSQL, never in DATA_DIR: a backup is refused (test/reliability/backup-restore.test.ts
    // makes one and reads its row). A recovery period is opened, checked and ended in turn.
    'POST /admin/backup': {
      why: 'the database is not kept in DATA_DIR by the embedded engine',
      refused: async () => ({ url: '/admin/backup', body: {} }),
    },
    'POST /admin/recovery/begin': async () => ({ url: '/admin/recovery/begin', body: {} }),
    'POST /admin/recovery/check': async () => ({ url: '/admin/recovery/check', body: {} }),
    // The check above found the sandbox rails matched and ended the period itself: open another.
    'POST /admin/recovery/end': async () => {
      await client.asSystem('POST', '/admin/recovery/begin', {})
      return { url: '/admin/recovery/end', body: { note: 'every route' } }
    },
    'POST /admin/capital': async () => ({
      url: '/admin/capital',
      body: { rail: 'tron', ccy: 'USDT', amount: '250', note: 'Every route', reference: 'every-route-1' },
    }),
    'POST /admin/approvals/:txnId/review': async () => ({
      url: `/admin/approvals/${await waitingApproval()}/review`,
      body: { note: 'looked at it' },
    }),
    'POST /admin/approvals/:txnId/approve': async () => {
      // Reviewed by the system operator, approved by the session's operator: two people.
      const txnId = await waitingApproval()
      await client.asSystem('POST', `/admin/approvals/${txnId}/review`, {})
      return { url: `/admin/approvals/${txnId}/approve`, body: {} }
    },
    'POST /admin/approvals/:txnId/reject': async () => ({
      url: `/admin/approvals/${await waitingApproval()}/reject`,
      body: { reason: 'not expected from this account' },
    }),
    'POST /admin/console/approvals/:txnId/review': async () => ({
      url: `/admin/console/approvals/${await waitingApproval()}/review`,
      body: { note: 'looked at it' },
    }),
    'POST /admin/console/approvals/:txnId/approve': async () => {
      const txnId = await waitingApproval()
      await client.asSystem('POST', `/admin/approvals/${txnId}/review`, {})
      return { url: `/admin/console/approvals/${txnId}/approve`, body: {} }
    },
    'POST /admin/console/approvals/:txnId/reject': async () => ({
      url: `/admin/console/approvals/${await waitingApproval()}/reject`,
      body: { reason: 'not expected from this account' },
    }),
    // Key rotation (issue 32): a new token signing key, audited in its transaction.
    'POST /admin/key-rotation/jwt': async () => ({ url: '/admin/key-rotation/jwt', body: {} }),
    // Screening (src/screening/routes.ts): a list of one Bitcoin address, and hits on it.
    'PUT /admin/screening/lists/:source': async () => ({
      url: '/admin/screening/lists/every-route',
      body: { list: `bitcoin,${LISTED_BTC}` },
    }),
    'DELETE /admin/screening/lists/:source': async () => {
      await client.asSystem('PUT', '/admin/screening/lists/every-route-2', { list: `bitcoin,${LISTED_BTC}` })
      return { url: '/admin/screening/lists/every-route-2' }
    },
    'POST /admin/screening/hits/:hitId/review': async () => ({
      url: `/admin/screening/hits/${await screeningHit('quote')}/review`,
      body: {},
    }),
    'POST /admin/screening/hits/:hitId/release': async () => ({
      url: `/admin/screening/hits/${await screeningHit('deposit')}/release`,
      body: {},
    }),
    'POST /admin/console/screening/hits/:hitId/review': async () => ({
      url: `/admin/console/screening/hits/${await screeningHit('quote')}/review`,
      body: {},
    }),
    'POST /admin/console/screening/hits/:hitId/release': async () => ({
      url: `/admin/console/screening/hits/${await screeningHit('deposit')}/release`,
      body: {},
    }),
  }

  const audited = Object.entries(ADMIN_ROUTES)
    .filter(
      ([key, access]) =>
        isStateChanging(key.split(' ')[0]!) && access.need !== 'public' && access.audit !== 'self',
    )
    .map(([key]) => key)

  beforeAll(async () => {
    h = await createAppHarness({
      resolveHost: async (name) =>
        name === 'hooks.example.com' ? [{ address: '93.184.216.34', family: 4 }] : [],
      env: { ALLOW_HTTP_WEBHOOKS: 'false', APPROVAL_THRESHOLD_USDT: '100' },
    })
    client = operatorClient(h.app, h.adminToken)
    session = await client.signIn(await client.createOperator('admin'))
    owner = await h.createAccount({ name: 'Owner' })
    await client.asSystem('POST', '/admin/sandbox/fund', {
      accountId: owner.accountId,
      ccy: 'BTC',
      amount: '0.01',
    })
    const hook = await h.api('POST', '/api/v2/webhook', owner.token, {
      callback: 'https://hooks.example.com/h',
      secret: 'owner-secret-0123456789',
    })
    const swap = {
      sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.0001', reqDetails: {} },
      destReq: { ccy: 'USD', method: 'svcpay', reqDetails: {} },
    }
    const txnId = (await h.api('POST', '/api/v2/transaction', owner.token, swap)).body.txnId
    await h.api('PUT', `/api/v2/transaction/${txnId}/confirm`, owner.token)
    deliveryId = (await h.api('GET', `/api/v2/webhook/${hook.body.id}/deliveries`, owner.token)).body.data[0]
      .id
  }, 60_000)
  afterAll(() => h?.close())

  it('has a case for every state-changing admin route', () => {
    expect(
      audited.filter((key) => !CASES[key]),
      'add a case to CASES in this file',
    ).toEqual([])
  })

  it('writes exactly one row per successful change, naming the operator, address and request', async () => {
    for (const key of audited) {
      const known = CASES[key]!
      if (typeof known !== 'function') {
        const tried = await known.refused()
        const top = Number((await h.c.db.query('SELECT max(id) AS id FROM admin_audit')).rows[0].id ?? 0)
        const res = await client.request(key.split(' ')[0]!, tried.url, { session, body: tried.body ?? {} })
        expect(res.status, `${key} (${known.why}): ${res.raw}`).toBeGreaterThanOrEqual(400)
        expect((await h.c.db.query('SELECT id FROM admin_audit WHERE id > $1', [top])).rows, key).toEqual([])
        continue
      }
      const made = await known()
      const s = made.session ?? session
      const { rows: me } = await h.c.db.query(
        `SELECT o.id, o.email FROM operator_sessions x JOIN operators o ON o.id = x.operator_id WHERE x.id_hash = $1`,
        [sha256(s.cookie.split('=')[1]!)],
      )
      const before = Number((await h.c.db.query('SELECT max(id) AS id FROM admin_audit')).rows[0].id ?? 0)
      const res = await client.request(key.split(' ')[0]!, made.url, {
        session: s,
        ...(made.body !== undefined ? { body: made.body } : {}),
      })
      // A console form answers Post/Redirect/Get: 303 See Other to its result page.
      expect(res.status, `${key}: ${res.raw}`).toBe(key.startsWith('POST /admin/console/') ? 303 : 200)
      const { rows } = await h.c.db.query('SELECT * FROM admin_audit WHERE id > $1 ORDER BY id', [before])
      expect(rows, key).toHaveLength(1)
      expect(rows[0], key).toMatchObject({
        operator_id: me[0].id,
        operator_email: me[0].email,
        client_ip: '127.0.0.1',
      })
      expect(rows[0].request_id, key).toMatch(/^req-/)
      expect(rows[0].action.length, key).toBeGreaterThan(3)
    }
  }, 120_000)
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, ENGINE, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { operatorClient, type Session } from '../../test/admin/operator-client.js'
import { historyProblems, moneyProblems, stuckTransactions } from '../../test/helpers/invariants.js'
import { runDueTransactions } from '../transactions/worker.js'
import { listStuck } from '../transactions/stuck.js'

// The USDT token contract on TRON mainnet: a well-known valid address.
const TRON_ADDRESS = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'
const BTC_ADDRESS = 'bcrt1qg975h6gdx5mryeac72h6lj2nzygugxhy5n57q2'
const KYC = { type: 'individual', details: { legalFullName: 'Trần Văn An', countryCode: 'VN' } }

const ENV = {
  SANDBOX_PAYOUT_DELAY_MS: '0',
  QUOTE_TTL_S: '600',
  APPROVAL_THRESHOLD_USDT: '100',
  APPROVAL_THRESHOLD_VND: '5000000',
  APPROVAL_THRESHOLD_BTC: '0.001',
  APPROVAL_TTL_S: '3600',
}

const tron = (amount: string) => ({
  sourceReq: { ccy: 'USDT', method: 'svcpay', reqDetails: {} },
  destReq: { ccy: 'USDT', method: 'tron', amtRequested: amount, reqDetails: { address: TRON_ADDRESS } },
})
// An EIP-55 test vector (https://eips.ethereum.org/EIPS/eip-55).
const ETH_ADDRESS = '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb'
const eth = (amount: string) => ({
  sourceReq: { ccy: 'USDT', method: 'svcpay', reqDetails: {} },
  destReq: { ccy: 'USDT', method: 'eth', amtRequested: amount, reqDetails: { address: ETH_ADDRESS } },
})
const vnd = (amount: string) => ({
  sourceReq: { ccy: 'VND', method: 'svcpay', reqDetails: {} },
  destReq: {
    ccy: 'VND',
    method: 'vnd-instant',
    amtRequested: amount,
    reqDetails: { bankAcctNum: '0123456789', institutionCode: '970436' },
    kyc: KYC,
  },
  sourceOfFunds: { purpose: 1, source: 1, relationship: 2 },
})
const onchain = (amount: string) => ({
  sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
  destReq: { ccy: 'BTC', method: 'on-chain', amtRequested: amount, reqDetails: { address: BTC_ADDRESS } },
})

/**
 * Four-eyes approval (issue 19) through the real operator API, sessions and worker: a send above
 * its threshold waits in `processing` with its funds held until one operator reviews it and another
 * approves it; a rejection or the deadline releases the funds.
 */
describe(`four-eyes approval (${ENGINE})`, () => {
  let h: Harness
  let client: ReturnType<typeof operatorClient>
  let a: TestAccount
  const ops = {} as Record<'finance1' | 'finance2' | 'finance3' | 'viewer' | 'support', Session>

  beforeAll(async () => {
    h = await createHarness(ENV)
    client = operatorClient(h.app, h.adminToken)
    for (const [name, role] of [
      ['finance1', 'finance'],
      ['finance2', 'finance'],
      ['finance3', 'finance'],
      ['viewer', 'viewer'],
      ['support', 'support'],
    ] as const)
      ops[name] = await client.signIn(await client.createOperator(role))
    a = await h.createAccount({ name: 'Big sender' })
    await h.fund(a.accountId, 'USDT', '100000')
    await h.fund(a.accountId, 'VND', '100000000')
    await h.fund(a.accountId, 'BTC', '1')
    await h.api('POST', '/api/v2/webhook', a.token, {
      callback: 'http://127.0.0.1:9/hook',
      secret: 'approval-test-secret-0123',
    })
  }, 120_000)
  afterAll(() => h?.close())

  const work = (now?: number) =>
    runDueTransactions({
      db: h.c.db,
      transactions: h.c.transactions,
      log: console,
      ...(now ? { now: () => now } : {}),
    })
  const get = async (txnId: string) => (await h.api('GET', `/api/v2/transaction/${txnId}`, a.token)).body
  const wallet = async (ccy: string): Promise<{ amount: number; availableBalance: number }> => {
    const w = (await h.api('GET', `/api/v2/account/${a.accountId}/wallet/`, a.token)).body.data.find(
      (x: any) => x.ccy === ccy,
    )
    return { amount: w.amount, availableBalance: w.availableBalance }
  }
  const states = async (txnId: string) =>
    (
      await h.c.db.query<{ txn_state: string }>(
        'SELECT txn_state FROM events WHERE txn_id = $1 ORDER BY id',
        [txnId],
      )
    ).rows.map((r) => r.txn_state)
  const act = (who: Session | 'system', verb: string, txnId: string, body: unknown = {}) =>
    client.request('POST', `/admin/approvals/${txnId}/${verb}`, {
      ...(who === 'system' ? { token: h.adminToken } : { session: who }),
      body,
    })
  const auditRows = async (txnId: string) =>
    (
      await h.c.db.query<{ action: string; operator_id: string }>(
        'SELECT action, operator_id FROM admin_audit WHERE target = $1 ORDER BY id',
        [`txnId=${txnId}`],
      )
    ).rows

  async function confirm(body: unknown) {
    const q = await h.api('POST', '/api/v2/transaction', a.token, body)
    expect(q.status, JSON.stringify(q.body)).toBe(200)
    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
    expect(c.status, JSON.stringify(c.body)).toBe(200)
    return c.body
  }

  async function expectInvariants() {
    await h.expectBooksBalanced()
    expect(await historyProblems(h.c.db)).toEqual([])
    expect(await moneyProblems(h.c.db)).toEqual([])
  }

  it('holds a TRON payout over the threshold in processing until a second operator approves it', async () => {
    const before = await wallet('USDT')
    const c = await confirm(tron('150'))
    expect(c.txnState).toBe('processing')
    expect([c.sourceReq.reqStatus, c.destReq.reqStatus]).toEqual(['1', '0'])
    // The funds are held (150 + 0.3 fee + 1 network fee), not spent.
    const held = await wallet('USDT')
    expect(held.amount).toBe(before.amount)
    expect(held.availableBalance).toBe(before.availableBalance - 151.3)

    // The worker leaves it alone: nothing reaches the rail before approval.
    await work()
    expect((await get(c.txnId)).txnState).toBe('processing')
    const sent = await h.c.db.query('SELECT 1 FROM sandbox_payouts WHERE request_id = $1', [c.txnId])
    expect(sent.rows).toHaveLength(0)
    expect(await states(c.txnId)).toEqual(['quoted', 'processing'])
    // The processing event is queued for the account's webhook like any other.
    const queued = await h.c.db.query(
      `SELECT 1 FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
        WHERE e.txn_id = $1 AND e.txn_state = 'processing'`,
      [c.txnId],
    )
    expect(queued.rows).toHaveLength(1)

    const listed = await client.request('GET', '/admin/approvals', { session: ops.viewer })
    expect(listed.status).toBe(200)
    const item = listed.body.data.find((x: any) => x.txnId === c.txnId)
    expect(item).toMatchObject({
      status: 'waiting',
      txnState: 'processing',
      type: 'tron_payout',
      reasons: [{ side: 'source', ccy: 'USDT', amount: '150', threshold: '100' }],
      review: null,
    })

    // Approval needs a review first, and the reviewer may not approve.
    expect((await act(ops.finance2, 'approve', c.txnId)).status).toBe(409)
    const reviewed = await act(ops.finance1, 'review', c.txnId, { note: 'beneficiary checked' })
    expect(reviewed.status, reviewed.raw).toBe(200)
    expect(reviewed.body.review.note).toBe('beneficiary checked')
    const self = await act(ops.finance1, 'approve', c.txnId)
    expect(self.status).toBe(403)
    expect(self.body).toEqual({ error: 'forbidden', message: expect.any(String) })
    expect((await act(ops.finance2, 'review', c.txnId)).status).toBe(409)

    const approved = await act(ops.finance2, 'approve', c.txnId, { note: 'ok' })
    expect(approved.status, approved.raw).toBe(200)
    expect(approved.body).toMatchObject({ status: 'approved', txnState: 'srccreated' })
    expect(approved.body.decision.email).not.toBe(reviewed.body.review.email)

    await work()
    expect((await get(c.txnId)).txnState).toBe('destsent')
    await work()
    const done = await get(c.txnId)
    expect(done.txnState).toBe('completed')
    expect((await wallet('USDT')).amount).toBe(before.amount - 151.3)
    expect(await states(c.txnId)).toEqual(['quoted', 'processing', 'srccreated', 'destsent', 'completed'])
    expect((await auditRows(c.txnId)).map((r) => r.action)).toEqual(['approval.review', 'approval.approve'])
    await expectInvariants()
  })

  it('holds an Ethereum payout over the threshold in processing until a second operator approves it', async () => {
    const before = await wallet('USDT')
    const c = await confirm(eth('150'))
    expect(c.txnState).toBe('processing')
    // Held: 150 + 0.3 fee + the network fee the sandbox's gas implies at the static ETH rate.
    const held = await wallet('USDT')
    expect(held.amount).toBe(before.amount)
    expect(Math.round((before.availableBalance - held.availableBalance) * 1e6)).toBe(154_720_652)
    await work()
    expect((await get(c.txnId)).txnState).toBe('processing')
    const none = await h.c.db.query('SELECT 1 FROM sandbox_payouts WHERE request_id = $1', [c.txnId])
    expect(none.rows).toHaveLength(0)

    const listed = await client.request('GET', '/admin/approvals', { session: ops.viewer })
    expect(listed.body.data.find((x: any) => x.txnId === c.txnId)).toMatchObject({
      status: 'waiting',
      type: 'eth_payout',
      reasons: [{ side: 'source', ccy: 'USDT', amount: '150', threshold: '100' }],
    })
    expect((await act(ops.finance1, 'review', c.txnId)).status).toBe(200)
    expect((await act(ops.finance1, 'approve', c.txnId)).status).toBe(403)
    const approved = await act(ops.finance2, 'approve', c.txnId)
    expect(approved.status, approved.raw).toBe(200)
    expect(approved.body).toMatchObject({ status: 'approved', txnState: 'srccreated' })

    await work()
    expect((await get(c.txnId)).txnState).toBe('destsent')
    await work()
    expect((await get(c.txnId)).txnState).toBe('completed')
    expect(await states(c.txnId)).toEqual(['quoted', 'processing', 'srccreated', 'destsent', 'completed'])
    const sent = await h.c.db.query('SELECT 1 FROM sandbox_payouts WHERE request_id = $1', [c.txnId])
    expect(sent.rows).toHaveLength(1)
    await expectInvariants()
  })

  it('sends once when two operators approve at the same moment', async () => {
    const c = await confirm(tron('200'))
    expect(c.txnState).toBe('processing')
    expect((await act('system', 'review', c.txnId)).status).toBe(200)
    const both = await Promise.all([
      act(ops.finance1, 'approve', c.txnId),
      act(ops.finance2, 'approve', c.txnId),
    ])
    expect(both.map((r) => r.status).sort()).toEqual([200, 409])
    await work()
    await work()
    expect((await get(c.txnId)).txnState).toBe('completed')
    expect(await states(c.txnId)).toEqual(['quoted', 'processing', 'srccreated', 'destsent', 'completed'])
    const sent = await h.c.db.query('SELECT 1 FROM sandbox_payouts WHERE request_id = $1', [c.txnId])
    expect(sent.rows).toHaveLength(1)
    // The ADMIN_TOKEN's system operator reviewed: it counts as one of the two.
    expect((await auditRows(c.txnId)).map((r) => [r.action, r.operator_id])).toEqual([
      ['approval.review', 'system'],
      ['approval.approve', expect.stringMatching(/^opr_/)],
    ])
    await expectInvariants()
  })

  it('decides once when an approval and a rejection come at the same moment', async () => {
    const before = await wallet('USDT')
    const c = await confirm(tron('120'))
    expect((await act(ops.finance3, 'review', c.txnId)).status).toBe(200)
    const [approve, reject] = await Promise.all([
      act(ops.finance1, 'approve', c.txnId),
      act(ops.finance2, 'reject', c.txnId, { reason: 'second thoughts' }),
    ])
    expect([approve.status, reject.status].sort()).toEqual([200, 409])
    await work()
    await work()
    const t = await get(c.txnId)
    const decisions = (await auditRows(c.txnId)).map((r) => r.action)
    if (approve.status === 200) {
      expect(t.txnState).toBe('completed')
      expect(decisions).toEqual(['approval.review', 'approval.approve'])
    } else {
      expect(t.txnState).toBe('rejected')
      expect(await wallet('USDT')).toEqual(before)
      expect(decisions).toEqual(['approval.review', 'approval.reject'])
    }
    await expectInvariants()
  })

  it('refuses viewers and support, and the reviewer when the reviewer is the system operator', async () => {
    const c = await confirm(vnd('6000000'))
    expect(c.txnState).toBe('processing')
    for (const who of [ops.viewer, ops.support]) {
      for (const verb of ['review', 'approve', 'reject']) {
        const res = await act(who, verb, c.txnId, { reason: 'no' })
        expect(res.status, `${verb}: ${res.raw}`).toBe(403)
        expect(res.body.error).toBe('forbidden')
      }
    }
    expect((await act('system', 'review', c.txnId)).status).toBe(200)
    expect((await act('system', 'approve', c.txnId)).status).toBe(403)
    expect((await get(c.txnId)).txnState).toBe('processing')
    expect((await auditRows(c.txnId)).map((r) => r.action)).toEqual(['approval.review'])
  })

  it('releases the funds of a rejected send, which ends rejected with its event', async () => {
    const before = await wallet('BTC')
    const c = await confirm(onchain('0.002'))
    expect(c.txnState).toBe('processing')
    expect((await wallet('BTC')).availableBalance).toBeLessThan(before.availableBalance)
    expect((await act(ops.finance3, 'reject', c.txnId, {})).status).toBe(400)
    const rejected = await act(ops.finance3, 'reject', c.txnId, { reason: 'unknown beneficiary' })
    expect(rejected.status, rejected.raw).toBe(200)
    expect(rejected.body).toMatchObject({ status: 'rejected', txnState: 'rejected' })
    expect(rejected.body.decision.note).toBe('unknown beneficiary')
    const t = await get(c.txnId)
    expect(t.txnState).toBe('rejected')
    expect(t.msg).toBe('approval_rejected')
    expect(await wallet('BTC')).toEqual(before)
    expect(await states(c.txnId)).toEqual(['quoted', 'processing', 'rejected'])
    expect((await act(ops.finance1, 'approve', c.txnId)).status).toBe(409)
    await expectInvariants()
  })

  it('asks no approval at or below the threshold', async () => {
    for (const body of [tron('100'), vnd('5000000'), onchain('0.001')]) {
      const c = await confirm(body)
      expect(c.txnState, JSON.stringify(body.destReq)).toBe('srccreated')
      const row = await h.c.db.query('SELECT 1 FROM approvals WHERE txn_id = $1', [c.txnId])
      expect(row.rows).toHaveLength(0)
    }
  })

  it('loses nothing across a restart while waiting', async () => {
    const c = await confirm(tron('300'))
    expect(c.txnState).toBe('processing')
    // A second instance on the same database; the first one stops.
    const other = await createHarness(ENV, { shareDbWith: h })
    const otherClient = operatorClient(other.app, other.adminToken)
    const listed = await otherClient.request('GET', '/admin/approvals', { token: other.adminToken })
    expect(listed.body.data.map((x: any) => x.txnId)).toContain(c.txnId)
    expect(await stuckTransactions(h.c.db)).toEqual([])
    // Long past every rail's bound, a send waiting for operators is in their queue, not the stuck list.
    const stuck = await listStuck(h.c.db, h.c.kinds, h.c.config.railOps, Date.now() + 3 * 3600_000, {
      page: 1,
      limit: 100,
    })
    expect(stuck.data.map((s) => s.txnId)).not.toContain(c.txnId)
    await other.close()
    expect((await act(ops.finance1, 'review', c.txnId)).status).toBe(200)
    expect((await act(ops.finance3, 'approve', c.txnId)).status).toBe(200)
    await work()
    await work()
    expect((await get(c.txnId)).txnState).toBe('completed')
  })

  it('still expires a waiting approval after a restart with no threshold set', async () => {
    const before = await wallet('USDT')
    const c = await confirm(tron('450'))
    expect(c.txnState).toBe('processing')
    // The operator removes every APPROVAL_THRESHOLD_<CCY> and restarts: what already waits must
    // still reach its deadline, not wait in processing for ever with the customer's funds held.
    const noThresholds = Object.fromEntries(
      Object.entries(ENV).filter(([name]) => !name.startsWith('APPROVAL_THRESHOLD_')),
    )
    const other = await createHarness(noThresholds, { shareDbWith: h })
    try {
      const { rows } = await other.c.db.query<{ expires_at: bigint }>(
        'SELECT expires_at FROM approvals WHERE txn_id = $1',
        [c.txnId],
      )
      await runDueTransactions({
        db: other.c.db,
        transactions: other.c.transactions,
        log: console,
        now: () => Number(rows[0]!.expires_at) + 1,
      })
    } finally {
      await other.close()
    }
    const t = await get(c.txnId)
    expect([t.txnState, t.msg]).toEqual(['rejected', 'approval_expired'])
    expect(await wallet('USDT')).toEqual(before)
    await expectInvariants()
  })

  it('expires an approval not given within APPROVAL_TTL_S and releases the funds', async () => {
    const before = await wallet('USDT')
    const c = await confirm(tron('400'))
    expect(c.txnState).toBe('processing')
    expect((await act(ops.finance1, 'review', c.txnId)).status).toBe(200)
    // Not yet due: the worker leaves it waiting.
    await work(Date.now() + 60_000)
    expect((await get(c.txnId)).txnState).toBe('processing')
    const { rows } = await h.c.db.query<{ next_check_at: bigint; expires_at: bigint }>(
      'SELECT t.next_check_at, a.expires_at FROM transactions t JOIN approvals a ON a.txn_id = t.id WHERE t.id = $1',
      [c.txnId],
    )
    expect(rows[0]!.next_check_at).toBe(rows[0]!.expires_at)
    await work(Number(rows[0]!.expires_at) + 1)
    const t = await get(c.txnId)
    expect(t.txnState).toBe('rejected')
    expect(t.msg).toBe('approval_expired')
    expect(await wallet('USDT')).toEqual(before)
    expect(await states(c.txnId)).toEqual(['quoted', 'processing', 'rejected'])
    const late = await act(ops.finance2, 'approve', c.txnId)
    expect(late.status).toBe(409)
    const expired = await client.request('GET', '/admin/approvals?status=expired', { session: ops.viewer })
    expect(expired.body.data.map((x: any) => x.txnId)).toContain(c.txnId)
    await expectInvariants()
  })
})

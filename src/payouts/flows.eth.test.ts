import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, ENGINE, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { historyProblems, moneyProblems } from '../../test/helpers/invariants.js'
import { operatorClient } from '../../test/admin/operator-client.js'
import { deliveryDepsOf, startReceiver, type Receiver } from '../../test/helpers/webhooks.js'
import { runDueDeliveries } from '../events/delivery-worker.js'
import { systemAccountId } from '../ledger/ledger.js'
import { listStuck } from '../transactions/stuck.js'
import { runDueTransactions } from '../transactions/worker.js'
import { serviceKinds } from '../wiring/kinds.js'

// EIP-55's published vectors (https://eips.ethereum.org/EIPS/eip-55).
const GOOD = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'
const FAILING = '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359'
const micro = (usdt: number): bigint => BigInt(Math.round(usdt * 1e6))
const HOOK_SECRET = 'eth-payout-hook-secret-0123'

const eth = (address: unknown, amt: unknown = 100, extra: Record<string, unknown> = {}) => ({
  sourceReq: { ccy: 'USDT', method: 'svcpay', reqDetails: {} },
  destReq: {
    ccy: 'USDT',
    method: 'eth',
    amtRequested: amt,
    reqDetails: address === undefined ? {} : { address },
  },
  ...extra,
})

/**
 * USDT payouts over Ethereum on the sandbox rail (ETH=sandbox, the default with RAILS=sandbox),
 * through the HTTP API, the worker and the webhook delivery: quoted with the network fee the gas
 * implies at the ETH rate, held at confirm, txHash at destsent, posted at completed; a reverted
 * transfer releases the hold; the rails check, the stuck listing and the reconciliation know the rail.
 */
describe(`payouts: USDT over Ethereum on the sandbox (${ENGINE})`, () => {
  let h: Harness
  let a: TestAccount
  let hooks: Receiver
  beforeAll(async () => {
    h = await createHarness({
      SANDBOX_PAYOUT_DELAY_MS: '0',
      SANDBOX_ETH_FAIL: FAILING,
      QUOTE_TTL_S: '60',
      ETH_EXPLORER_URL: 'https://sepolia.etherscan.io/',
      RECONCILE_HALT_SENDS: 'true',
    })
    a = await h.createAccount({ name: 'Ethereum payer' })
    await h.fund(a.accountId, 'USDT', '1000')
    hooks = await startReceiver(HOOK_SECRET)
    const hook = await h.api('POST', '/api/v2/webhook', a.token, { callback: hooks.url, secret: HOOK_SECRET })
    expect(hook.status).toBe(200)
  }, 120_000)
  afterAll(async () => {
    await hooks?.close()
    await h?.close()
  })

  /** The USDT wallet in micro-USDT, exactly (the API's numbers are exact decimals of 6 places). */
  const wallet = async () => {
    const w = (await h.api('GET', `/api/v2/account/${a.accountId}/wallet/`, a.token)).body.data.find(
      (x: any) => x.ccy === 'USDT',
    )
    return { amount: micro(w.amount), availableBalance: micro(w.availableBalance) }
  }
  const get = async (txnId: string) => (await h.api('GET', `/api/v2/transaction/${txnId}`, a.token)).body
  const work = () => runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: console })
  const systemBalance = async (id: string) => {
    const { rows } = await h.c.db.query<{ total: bigint | null }>(
      'SELECT SUM(amount)::int8 AS total FROM postings WHERE ledger_account_id = $1',
      [id],
    )
    return BigInt(rows[0]?.total ?? 0n)
  }
  const states = async (txnId: string) =>
    (
      await h.c.db.query<{ txn_state: string }>(
        'SELECT txn_state FROM events WHERE txn_id = $1 ORDER BY id',
        [txnId],
      )
    ).rows.map((r) => r.txn_state)
  async function expectInvariants() {
    await h.expectBooksBalanced()
    expect(await historyProblems(h.c.db)).toEqual([])
    expect(await moneyProblems(h.c.db)).toEqual([])
  }

  it('pays out USDT over Ethereum: gas-priced quote, held at confirm, txHash at destsent, posted at completed, webhooks', async () => {
    const before = await wallet()
    const fees0 = await systemBalance(systemAccountId('fees', 'USDT'))
    const q = await h.api('POST', '/api/v2/transaction', a.token, eth(GOOD.toLowerCase(), 100))
    expect(q.status, JSON.stringify(q.body)).toBe(200)
    expect(q.body.txnState).toBe('quoted')
    expect(q.body.fxRate).toBe(1)
    expect([q.body.sourceReq.amtRequested, q.body.destReq.amtRequested]).toEqual([100, 100])
    // 20 bps of 100 USDT (FEE_ETH); the network fee is the sandbox's fee cap, 20 gwei x 65,000 gas =
    // 0.0013 ETH, at the static rates' 95010 USDT and 27.94 ETH per BTC: 4.42065139... USDT,
    // rounded up to the micro-USDT.
    expect(q.body.sourceReq.svcpayFees).toBe(0.2)
    expect(q.body.sourceReq.networkFees).toBe(4.420652)
    // The address is kept in its EIP-55 form, with the cap in wei the send must stay under.
    expect(q.body.destReq.reqDetails).toEqual({ address: GOOD, maxFeeWei: '1300000000000000' })

    const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
    expect(c.body.txnState).toBe('srccreated')
    const held = await wallet()
    expect(held.amount).toBe(before.amount)
    expect(held.availableBalance).toBe(before.availableBalance - 104620652n)

    await work()
    const sent = await get(q.body.txnId)
    expect(sent.txnState).toBe('destsent')
    expect(sent.destReq.reqDetails.txHash).toMatch(/^0x[0-9a-f]{64}$/)
    expect([sent.sourceReq.reqStatus, sent.destReq.reqStatus]).toEqual(['2', '1'])
    expect((await wallet()).amount).toBe(before.amount)

    await work()
    const done = await get(q.body.txnId)
    expect(done.txnState).toBe('completed')
    expect(done.msg).toBe('')
    expect(done.destReq.amtSettled).toBe(100)
    expect(done.destReq.reqDetails).toEqual({
      address: GOOD,
      maxFeeWei: '1300000000000000',
      txHash: sent.destReq.reqDetails.txHash,
      // What the hot wallet paid in ETH: 46,000 gas at 12 gwei.
      chainFeeEth: 0.000552,
    })
    const after = await wallet()
    expect(after.amount).toBe(before.amount - 104620652n)
    expect(after.availableBalance).toBe(after.amount)
    // Exactly the 100 USDT the chain moves leaves by the Ethereum account; the network fee stays in
    // the hot wallet (the chain is paid in ETH) and goes to revenue with the service fee.
    expect(await systemBalance(systemAccountId('ethereum', 'USDT'))).toBe(100_000_000n)
    expect((await systemBalance(systemAccountId('fees', 'USDT'))) - fees0).toBe(4_620_652n)
    expect(await states(q.body.txnId)).toEqual(['quoted', 'srccreated', 'destsent', 'completed'])

    // Every change reached the account's webhook, signed.
    await runDueDeliveries(deliveryDepsOf(h.c, { retryDelayMs: () => 0 }))
    const deadline = Date.now() + 5_000
    const mine = () => hooks.received.filter((r) => r.body.txnId === q.body.txnId)
    while (!mine().some((r) => r.body.txnState === 'completed')) {
      expect(Date.now()).toBeLessThan(deadline)
      await hooks.waitFor(hooks.received.length + 1, 5_000)
    }
    expect(mine().every((r) => r.signatureValid)).toBe(true)
    expect(mine().map((r) => r.body.txnState)).toEqual(['quoted', 'srccreated', 'destsent', 'completed'])

    // The status stream of a finished payout gives its final state and closes.
    const sse = await h.app.inject({
      method: 'GET',
      url: `/api/v2/transaction/${q.body.txnId}/events`,
      headers: { authorization: `Bearer ${a.token}`, accept: 'text/event-stream' },
    })
    expect(sse.statusCode).toBe(200)
    expect(sse.body).toContain('"txnState":"completed"')

    // The list's method filter finds it.
    const listed = await h.api('GET', '/api/v2/transaction?destMethods=eth', a.token)
    expect(listed.status).toBe(200)
    expect(listed.body.data.map((t: any) => t.txnId)).toContain(q.body.txnId)
    expect(listed.body.data.every((t: any) => t.destReq.method === 'eth')).toBe(true)
    await expectInvariants()
  })

  it('takes the fees out of an Ethereum payout with deductNetworkFeesFromDest', async () => {
    const before = await wallet()
    const q = await h.api(
      'POST',
      '/api/v2/transaction',
      a.token,
      eth(GOOD, 50, { deductNetworkFeesFromDest: true }),
    )
    expect(q.status, JSON.stringify(q.body)).toBe(200)
    // 50 less 0.1 service fee and 4.420652 network fee.
    expect([q.body.sourceReq.amtRequested, q.body.destReq.amtRequested]).toEqual([50, 45.479348])
    await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
    await work()
    await work()
    expect((await get(q.body.txnId)).txnState).toBe('completed')
    expect((await wallet()).amount).toBe(before.amount - 50000000n)
    await expectInvariants()
  })

  it('fails a transfer to a SANDBOX_ETH_FAIL address (reverted) and releases the hold', async () => {
    const before = await wallet()
    const q = await h.api('POST', '/api/v2/transaction', a.token, eth(FAILING, 10))
    await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
    expect((await wallet()).availableBalance).toBe(before.availableBalance - 14440652n)
    await work()
    expect((await get(q.body.txnId)).txnState).toBe('destsent')
    await work()
    const done = await get(q.body.txnId)
    expect([done.txnState, done.msg]).toEqual(['failed', 'transfer_reverted'])
    expect(done.destReq.amtSettled).toBeNull()
    expect(done.destReq.reqDetails.txHash).toMatch(/^0x[0-9a-f]{64}$/)
    const after = await wallet()
    expect([after.amount, after.availableBalance]).toEqual([before.amount, before.availableBalance])
    expect(await states(q.body.txnId)).toEqual(['quoted', 'srccreated', 'destsent', 'failed'])
    // One transfer was sent, and no second attempt is made.
    await work()
    const { rows } = await h.c.db.query('SELECT 1 FROM sandbox_payouts WHERE request_id = $1', [q.body.txnId])
    expect(rows).toHaveLength(1)
    await expectInvariants()
  })

  it('refuses bad Ethereum addresses with invalid_address naming the field; accepts all-lower and all-upper', async () => {
    const flipped = GOOD.slice(0, 3) + GOOD[3]!.toUpperCase() + GOOD.slice(4) // 0x5AAeb...: mixed case, bad checksum
    expect(flipped).not.toBe(GOOD)
    for (const address of [
      flipped,
      GOOD.slice(2),
      GOOD.slice(0, -1),
      GOOD + '0',
      '0x' + 'g'.repeat(40),
      'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
      42,
      undefined,
    ]) {
      const r = await h.api('POST', '/api/v2/transaction', a.token, eth(address))
      expect([r.status, r.body.error], String(address)).toEqual([400, 'invalid_address'])
      expect(r.body.details[0].field).toBe('destReq.reqDetails.address')
    }
    const upper = await h.api('POST', '/api/v2/transaction', a.token, eth('0x' + GOOD.slice(2).toUpperCase()))
    expect(upper.status).toBe(200)
    expect(upper.body.destReq.reqDetails.address).toBe(GOOD)
    // Ethereum pays out USDT only.
    const btc = await h.api('POST', '/api/v2/transaction', a.token, {
      sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
      destReq: { ccy: 'BTC', method: 'eth', amtRequested: 0.001, reqDetails: { address: GOOD } },
    })
    expect([btc.status, btc.body.error]).toEqual([400, 'unsupported_currency_pair'])
    await expectInvariants()
  })

  it("shows a payout's transaction hash on the console, linked to the explorer, and finds it by the hash", async () => {
    const q = await h.api('POST', '/api/v2/transaction', a.token, eth(GOOD, 2))
    await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
    await work()
    await work()
    const { txHash } = (await get(q.body.txnId)).destReq.reqDetails
    const client = operatorClient(h.app, h.adminToken)
    const admin = await client.signIn(await client.createOperator('viewer'))
    const page = async (url: string) => {
      const res = await h.app.inject({
        method: 'GET',
        url,
        headers: { accept: 'text/html', cookie: admin.cookie },
      })
      expect(res.statusCode, url).toBe(200)
      return res.body
    }
    const body = await page(`/admin/console/transactions/${q.body.txnId}`)
    expect(body).toContain(`href="https://sepolia.etherscan.io/tx/${txHash}"`)
    expect(body).toContain('eth_payout')
    expect(await page(`/admin/console/transactions?q=${txHash}`)).toContain(
      `/admin/console/transactions/${q.body.txnId}`,
    )
  })

  it('is held by the reconciliation brake on the ethereum rail: no confirm, no submission, until it lifts', async () => {
    const waiting = await h.api('POST', '/api/v2/transaction', a.token, eth(GOOD, 3))
    await h.api('PUT', `/api/v2/transaction/${waiting.body.txnId}/confirm`, a.token)
    const later = await h.api('POST', '/api/v2/transaction', a.token, eth(GOOD, 4))
    const at = Date.now()
    await h.c.db.query(
      `INSERT INTO reconcile_brake (rail, deficit_readings, paused_at, updated_at) VALUES ('ethereum', 3, $1, $1)`,
      [at],
    )
    try {
      const refused = await h.api('PUT', `/api/v2/transaction/${later.body.txnId}/confirm`, a.token)
      expect([refused.status, refused.body.error]).toEqual([503, 'sends_paused'])
      expect((await get(later.body.txnId)).txnState).toBe('quoted')
      // The payout confirmed before the pause waits in srccreated, its funds held; nothing is sent.
      await work()
      expect((await get(waiting.body.txnId)).txnState).toBe('srccreated')
      const sent = await h.c.db.query('SELECT 1 FROM sandbox_payouts WHERE request_id = $1', [
        waiting.body.txnId,
      ])
      expect(sent.rows).toHaveLength(0)
      // A TRON payout is not held by the Ethereum rail's brake.
      const tron = await h.api('POST', '/api/v2/transaction', a.token, {
        ...eth(undefined, 1),
        destReq: {
          ccy: 'USDT',
          method: 'tron',
          amtRequested: 1,
          reqDetails: { address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' },
        },
      })
      expect((await h.api('PUT', `/api/v2/transaction/${tron.body.txnId}/confirm`, a.token)).status).toBe(200)
    } finally {
      await h.c.db.query(`DELETE FROM reconcile_brake WHERE rail = 'ethereum'`)
    }
    // Lifted: the waiting payout goes (the worker looks at it again once its recheck is due).
    await runDueTransactions({
      db: h.c.db,
      transactions: h.c.transactions,
      log: console,
      now: () => Date.now() + 120_000,
    })
    expect((await get(waiting.body.txnId)).txnState).toBe('destsent')
    await h.api('PUT', `/api/v2/transaction/${later.body.txnId}/cancel`, a.token)
  })

  it('is named, with its details, by the OpenAPI document', async () => {
    const doc = JSON.parse((await h.app.inject({ method: 'GET', url: '/openapi.json' })).body)
    const text = JSON.stringify(doc.paths['/api/v2/transaction'].post)
    expect(text).toContain('svcpay, lightning, on-chain, tron, eth, vnd-instant')
    expect(text).toContain('EIP-55')
    expect(JSON.stringify(doc.components ?? doc)).toContain('maxFeeWei')
  })

  it('is in the rails check, the stuck listing and the reconciliation', async () => {
    const checked = await h.c.checkRails()
    expect(checked.rails.find((r) => r.rail === 'ethereum')).toMatchObject({
      adapter: 'sandbox',
      verdict: 'sandbox',
    })

    // A payout the rail has not finished two hours after it was sent is listed as stuck on its rail.
    const q = await h.api('POST', '/api/v2/transaction', a.token, eth(GOOD, 1))
    await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
    await work()
    expect((await get(q.body.txnId)).txnState).toBe('destsent')
    const page = { page: 1, limit: 100 }
    const soon = await listStuck(h.c.db, serviceKinds(), h.c.config.railOps, Date.now() + 60_000, page)
    expect(soon.data.map((s) => s.txnId)).not.toContain(q.body.txnId)
    const later = await listStuck(
      h.c.db,
      serviceKinds(),
      h.c.config.railOps,
      Date.now() + 3 * 3_600_000,
      page,
    )
    expect(later.data.find((s) => s.txnId === q.body.txnId)).toMatchObject({ rail: 'ethereum' })
    await work()
    expect((await get(q.body.txnId)).txnState).toBe('completed')

    // The hot wallet's USDT, as the sandbox network counts it, equals the books'.
    const report = await h.c.reconcile()
    const rail = report.rails.find((r) => r.rail === 'ethereum')
    expect(rail).toMatchObject({ ccy: 'USDT', adapter: 'sandbox', status: 'ok', delta: '0' })
    expect(report.orphans.filter((o) => o.rail === 'ethereum')).toEqual([])
    await expectInvariants()
  })
})

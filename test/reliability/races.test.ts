import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, ENGINE, type Harness, type TestAccount } from '../helpers/harness.js'
import { finishCase, historyProblems, moneyProblems } from '../helpers/invariants.js'
import { runDueTransactions } from '../../src/transactions/worker.js'
import { runDueAddresses } from '../../src/onchain/deposits.js'

/**
 * Races through the HTTP API: requests that compete for the same money or the same transaction,
 * fired at once. Whatever order they land in, no wallet is overdrawn, nothing executes twice, every
 * history is a path through the state machine, and the books balance. On PostgreSQL the requests
 * really run concurrently on separate connections; PGlite has one connection, so there the races
 * are between requests interleaving at every await.
 */

const SATS = 100_000_000

const swap = (btc: string, extra: Record<string, unknown> = {}) => ({
  sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: btc, reqDetails: {} },
  destReq: { ccy: 'USD', method: 'svcpay', reqDetails: {} },
  ...extra,
})
const lnReceive = (btc: string) => ({
  sourceReq: { ccy: 'BTC', method: 'lightning', reqDetails: {} },
  destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: btc, reqDetails: {} },
})
const lnSend = (paymentRequest: string) => ({
  sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
  destReq: { ccy: 'BTC', method: 'lightning', reqDetails: { paymentRequest } },
})
const onchainSend = (address: string, btc: string) => ({
  sourceReq: { ccy: 'BTC', method: 'svcpay', reqDetails: {} },
  destReq: { ccy: 'BTC', method: 'on-chain', amtRequested: btc, reqDetails: { address } },
})

/** A JSON amount (exact decimal text read as a number) in sats. */
const sats = (amount: number) => BigInt(Math.round(amount * SATS))

describe('races', () => {
  let h: Harness
  let ops = 0
  beforeAll(async () => {
    h = await createHarness({ QUOTE_TTL_S: '600' })
  })
  afterAll(async () => h?.close())

  /** Counts every request the case makes, for its report line. */
  const api = (method: string, url: string, token: string, body?: unknown) => {
    ops++
    return h.api(method, url, token, body)
  }
  const balance = async (accountId: string, ccy = 'BTC') => {
    const { rows } = await h.c.db.query<{ posted: bigint; pending: bigint }>(
      `SELECT posted, pending FROM ledger_accounts WHERE account_id = $1 AND ccy = $2`,
      [accountId, ccy],
    )
    return rows[0]!
  }
  const work = async () => {
    await runDueAddresses({ ...h.c.bitcoin, log: console })
    return runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: console })
  }
  const stateOf = async (txnId: string) =>
    (
      await h.c.db.query<{ state: string; msg: string }>(
        'SELECT state, msg FROM transactions WHERE id = $1',
        [txnId],
      )
    ).rows[0]!
  const expectNoServerErrors = (results: Array<{ status: number; body: any }>) => {
    for (const r of results) expect(r.status, JSON.stringify(r.body)).toBeLessThan(500)
  }
  const outsideInvoice = async (token: string, btc: string) => {
    const r = await api('POST', '/sandbox/lightning/invoice', token, { amount: btc })
    expect(r.status).toBe(200)
    return r.body.paymentRequest as string
  }
  /** An invoice of ours: a Lightning receive of `a`, confirmed (srccreated). */
  const ourInvoice = async (a: TestAccount, btc: string) => {
    const q = await api('POST', '/api/v2/transaction', a.token, lnReceive(btc))
    const c = await api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
    expect(c.body.txnState).toBe('srccreated')
    return {
      txnId: c.body.txnId as string,
      paymentRequest: c.body.sourceReq.reqDetails.paymentRequest as string,
    }
  }

  it(
    'many parallel spends from one wallet never overdraw it: exactly as many complete as the funds cover',
    { timeout: 120_000 },
    async () => {
      ops = 0
      const a = await h.createAccount({ name: 'Spender' })
      await h.fund(a.accountId, 'BTC', '0.001')
      // 30 swaps of 0.0001 BTC, each taking 10,050 sats with its 0.5% fee: 100,000 sats cover 9.
      const quotes = await Promise.all(
        Array.from({ length: 30 }, () => api('POST', '/api/v2/transaction', a.token, swap('0.0001'))),
      )
      expectNoServerErrors(quotes)
      expect(quotes.every((q) => q.status === 200)).toBe(true)
      const confirms = await Promise.all(
        quotes.map((q) => api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)),
      )
      expectNoServerErrors(confirms)
      const states = confirms.map((c) => c.body.txnState)
      expect(states.filter((s) => s === 'completed')).toHaveLength(9)
      expect(states.filter((s) => s === 'failed')).toHaveLength(21)
      expect(
        confirms
          .filter((c) => c.body.txnState === 'failed')
          .every((c) => c.body.msg === 'insufficient_funds'),
      ).toBe(true)
      expect(await balance(a.accountId)).toEqual({ posted: 100_000n - 9n * 10_050n, pending: 0n })

      // A second wave mixes every kind of spend: swaps, Lightning sends and on-chain sends, each
      // created and confirmed at once, more than the wallet can pay for.
      await h.fund(a.accountId, 'BTC', '0.002')
      const funded = 100_000n - 9n * 10_050n + 200_000n
      const other = await h.createAccount({ name: 'Deposit target' })
      const address = (await api('GET', '/api/v2/account/onchain-address', other.token)).body
        .staticOnchainAddress
      const invoices = await Promise.all(
        Array.from({ length: 12 }, () => outsideInvoice(other.token, '0.00005')),
      )
      const bodies = [
        ...Array.from({ length: 12 }, () => swap('0.0001')),
        ...invoices.map((pr) => lnSend(pr)),
        ...Array.from({ length: 8 }, () => onchainSend(address, '0.00004')),
      ]
      const results = await Promise.all(
        bodies.map(async (body) => {
          const q = await api('POST', '/api/v2/transaction', a.token, body)
          expect(q.status, JSON.stringify(q.body)).toBe(200)
          return api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
        }),
      )
      expectNoServerErrors(results)
      const ids = results.map((r) => r.body.txnId as string)
      // Let the sends go out: Lightning payments complete, on-chain sends need a block.
      for (let round = 0; round < 20; round++) {
        await work()
        await api('POST', '/sandbox/onchain/mine', a.token, { blocks: 1 })
        const open = await h.c.db.query(
          `SELECT id FROM transactions WHERE id = ANY($1) AND state NOT IN ('completed', 'failed')`,
          [ids],
        )
        if (open.rowCount === 0) break
      }
      const finals = await Promise.all(ids.map((id) => api('GET', `/api/v2/transaction/${id}`, a.token)))
      let spent = 0n
      for (const t of finals.map((f) => f.body)) {
        expect(['completed', 'failed'], `${t.txnId} ${t.txnState}`).toContain(t.txnState)
        if (t.txnState === 'failed') expect(t.msg).toBe('insufficient_funds')
        // What a completed spend took: amount, service fee and the network fee it actually paid.
        if (t.txnState === 'completed') {
          spent +=
            sats(t.sourceReq.amtRequested) + sats(t.sourceReq.svcpayFees) + sats(t.sourceReq.networkFees)
        }
      }
      const after = await balance(a.accountId)
      expect(after.pending).toBe(0n)
      expect(after.posted).toBe(funded - spent)
      expect(after.posted).toBeGreaterThanOrEqual(0n)
      expect(finals.some((f) => f.body.txnState === 'failed')).toBe(true)
      expect(await historyProblems(h.c.db)).toEqual([])
      expect(await moneyProblems(h.c.db)).toEqual([])
      expect(await moneyProblems(h.c.db)).toEqual([])
      await finishCase('parallel spends from one wallet', h.c.db, { ops, detail: `${ENGINE}` })
    },
  )

  it('confirm against cancel of the same quote: exactly one wins, and a cancelled quote releases its hold', async () => {
    ops = 0
    const a = await h.createAccount({ name: 'Confirm or cancel' })
    await h.fund(a.accountId, 'BTC', '0.01')
    const quotes = await Promise.all(
      Array.from({ length: 20 }, () => api('POST', '/api/v2/transaction', a.token, swap('0.0001'))),
    )
    const raced = await Promise.all(
      quotes.map(async (q, i) => {
        const url = `/api/v2/transaction/${q.body.txnId}`
        // Alternate which request leaves first, and by how much (0-4 ms), so both orders are exercised:
        // a confirm does more work before it takes the row lock than a cancel does.
        const late = (method: 'confirm' | 'cancel') =>
          new Promise((r) => setTimeout(r, i % 5)).then(() => api('PUT', `${url}/${method}`, a.token))
        const [confirm, cancel] = await Promise.all(
          i % 2 === 0
            ? [api('PUT', `${url}/confirm`, a.token), late('cancel')]
            : [late('confirm'), api('PUT', `${url}/cancel`, a.token)],
        )
        return { txnId: q.body.txnId as string, confirm: confirm!, cancel: cancel! }
      }),
    )
    let completed = 0
    for (const { txnId, confirm, cancel } of raced) {
      expectNoServerErrors([confirm, cancel])
      const { state } = await stateOf(txnId)
      if (state === 'completed') {
        completed++
        expect(confirm.status).toBe(200)
        expect(confirm.body.txnState).toBe('completed')
        expect(cancel).toMatchObject({ status: 409, body: { error: 'invalid_state' } })
      } else {
        expect(state).toBe('usercanceled')
        expect(cancel.status).toBe(200)
        expect(cancel.body.txnState).toBe('usercanceled')
        expect(confirm).toMatchObject({ status: 409, body: { error: 'invalid_state' } })
      }
    }
    expect(await balance(a.accountId)).toEqual({
      posted: 1_000_000n - BigInt(completed) * 10_050n,
      pending: 0n,
    })
    expect(await historyProblems(h.c.db)).toEqual([])
    expect(await moneyProblems(h.c.db)).toEqual([])
    await finishCase('confirm against cancel', h.c.db, { ops, detail: `${completed} of 20 confirmed first` })
  })

  it('confirm against expiry of the same quote: either it completes or it expires with its hold released', async () => {
    ops = 0
    const a = await h.createAccount({ name: 'Confirm or expire' })
    await h.fund(a.accountId, 'BTC', '0.01')
    const quotes = await Promise.all(
      Array.from({ length: 24 }, () => api('POST', '/api/v2/transaction', a.token, swap('0.0001'))),
    )
    const ids = quotes.map((q) => q.body.txnId as string)
    // Every quote now expires at one moment, a second from now; confirms are fired from 300 ms before
    // it to 300 ms after it while the worker sweeps expired quotes as fast as it can.
    const expiresAt = Date.now() + 1_000
    await h.c.db.query('UPDATE transactions SET expires_at = $2, next_check_at = $2 WHERE id = ANY($1)', [
      ids,
      expiresAt,
    ])
    let sweeping = true
    const sweeper = (async () => {
      let sweeps = 0
      while (sweeping) {
        await runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: console })
        sweeps++
        await new Promise((r) => setImmediate(r))
      }
      return sweeps
    })()
    const confirms = await Promise.all(
      ids.map(async (id, i) => {
        const fireAt = expiresAt - 300 + Math.round((600 * i) / (ids.length - 1))
        await new Promise((r) => setTimeout(r, Math.max(0, fireAt - Date.now())))
        return api('PUT', `/api/v2/transaction/${id}/confirm`, a.token)
      }),
    )
    await new Promise((r) => setTimeout(r, 100))
    sweeping = false
    ops += await sweeper
    await runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: console })
    let completed = 0
    for (const [i, id] of ids.entries()) {
      const c = confirms[i]!
      expectNoServerErrors([c])
      const { state, msg } = await stateOf(id)
      if (state === 'completed') {
        completed++
        expect(c.status).toBe(200)
        expect(c.body.txnState).toBe('completed')
      } else {
        expect({ state, msg }).toEqual({ state: 'expired', msg: 'quote_expired' })
        expect(c).toMatchObject({ status: 409, body: { error: 'quote_expired' } })
      }
    }
    expect(await balance(a.accountId)).toEqual({
      posted: 1_000_000n - BigInt(completed) * 10_050n,
      pending: 0n,
    })
    expect(await historyProblems(h.c.db)).toEqual([])
    expect(await moneyProblems(h.c.db)).toEqual([])
    await finishCase('confirm against expiry', h.c.db, {
      ops,
      detail: `${completed} of 24 confirmed in time`,
    })
  })

  it('parallel confirms of one quote execute it once', async () => {
    ops = 0
    const a = await h.createAccount({ name: 'Confirm twice' })
    await h.fund(a.accountId, 'BTC', '0.01')
    for (let round = 0; round < 5; round++) {
      const q = await api('POST', '/api/v2/transaction', a.token, swap('0.0001'))
      const confirms = await Promise.all(
        Array.from({ length: 8 }, () => api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)),
      )
      expectNoServerErrors(confirms)
      expect(confirms.map((c) => c.body.txnState)).toEqual(Array(8).fill('completed'))
      const entries = await h.c.db.query('SELECT id FROM journal_entries WHERE txn_id = $1', [q.body.txnId])
      expect(entries.rowCount).toBe(1)
    }
    expect(await balance(a.accountId)).toEqual({ posted: 1_000_000n - 5n * 10_050n, pending: 0n })
    await finishCase('parallel confirms of one quote', h.c.db, { ops })
  })

  it('parallel creates with one extRefId make one transaction; a different body with it is refused', async () => {
    ops = 0
    const a = await h.createAccount({ name: 'Idempotent' })
    await h.fund(a.accountId, 'BTC', '0.01')
    // The same body twenty times at once: one transaction, one hold, twenty identical answers.
    const same = await Promise.all(
      Array.from({ length: 20 }, () =>
        api('POST', '/api/v2/transaction', a.token, swap('0.0001', { extRefId: 'same-1' })),
      ),
    )
    expectNoServerErrors(same)
    expect(same.map((r) => r.status)).toEqual(Array(20).fill(200))
    expect(new Set(same.map((r) => r.body.txnId)).size).toBe(1)
    expect(await balance(a.accountId)).toEqual({ posted: 1_000_000n, pending: 10_050n })

    // Two different bodies with one extRefId at once: one of them wins, the other is refused.
    const mixed = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        api(
          'POST',
          '/api/v2/transaction',
          a.token,
          swap(i % 2 ? '0.0002' : '0.0001', { extRefId: 'mixed-1' }),
        ),
      ),
    )
    expectNoServerErrors(mixed)
    const winners = mixed.filter((r) => r.status === 200)
    expect(new Set(winners.map((r) => r.body.txnId)).size).toBe(1)
    const winningAmount = winners[0]!.body.sourceReq.amtRequested
    expect(winners.every((r) => r.body.sourceReq.amtRequested === winningAmount)).toBe(true)
    const losers = mixed.filter((r) => r.status !== 200)
    expect(losers.length).toBe(10)
    for (const r of losers) expect(r).toMatchObject({ status: 409, body: { error: 'duplicate_ext_ref_id' } })
    const rows = await h.c.db.query(`SELECT id FROM transactions WHERE account_id = $1`, [a.accountId])
    expect(rows.rowCount).toBe(2)
    const holds = await h.c.db.query(
      `SELECT h.txn_id FROM holds h JOIN transactions t ON t.id = h.txn_id WHERE t.account_id = $1`,
      [a.accountId],
    )
    expect(holds.rowCount).toBe(2)
    // Confirming both ids at once alongside their retries executes each once.
    const confirms = await Promise.all(
      [same[0]!.body.txnId, winners[0]!.body.txnId, same[1]!.body.txnId, winners[1]!.body.txnId].map((id) =>
        api('PUT', `/api/v2/transaction/${id}/confirm`, a.token),
      ),
    )
    expect(confirms.map((c) => c.body.txnState)).toEqual(Array(4).fill('completed'))
    const debit = 10_050n + (winningAmount === 0.0002 ? 20_100n : 10_050n)
    expect(await balance(a.accountId)).toEqual({ posted: 1_000_000n - debit, pending: 0n })
    expect(await historyProblems(h.c.db)).toEqual([])
    expect(await moneyProblems(h.c.db)).toEqual([])
    await finishCase('parallel creates with one extRefId', h.c.db, { ops })
  })

  it('an invoice of ours paid from outside several times at once is paid once', async () => {
    ops = 0
    const shop = await h.createAccount({ name: 'Shop' })
    const payer = await h.createAccount({ name: 'Outside payer' })
    for (let round = 0; round < 4; round++) {
      const inv = await ourInvoice(shop, '0.0001')
      const pays = await Promise.all(
        Array.from({ length: 5 }, () =>
          api('POST', '/sandbox/lightning/pay', payer.token, { paymentRequest: inv.paymentRequest }),
        ),
      )
      expectNoServerErrors(pays)
      expect(pays.filter((p) => p.status === 200)).toHaveLength(1)
      for (const p of pays.filter((x) => x.status !== 200)) {
        expect(p).toMatchObject({ status: 400, body: { error: 'invalid_payment_request' } })
      }
      await work()
      expect((await stateOf(inv.txnId)).state).toBe('completed')
    }
    expect(await balance(shop.accountId)).toEqual({ posted: 4n * 10_000n, pending: 0n })
    expect(await historyProblems(h.c.db)).toEqual([])
    expect(await moneyProblems(h.c.db)).toEqual([])
    await finishCase('parallel outside payments of one invoice', h.c.db, { ops })
  })

  it('one outside invoice sent to by two of our transactions is paid, and charged, once', async () => {
    ops = 0
    const alice = await h.createAccount({ name: 'Payer one' })
    const bob = await h.createAccount({ name: 'Payer two' })
    await h.fund(alice.accountId, 'BTC', '0.01')
    await h.fund(bob.accountId, 'BTC', '0.01')
    let charged = 0n
    for (let round = 0; round < 4; round++) {
      const pr = await outsideInvoice(alice.token, '0.0001')
      // Two accounts (rounds 0-1) or one account twice (rounds 2-3) pay the same outside invoice.
      const second = round < 2 ? bob : alice
      const q1 = await api('POST', '/api/v2/transaction', alice.token, lnSend(pr))
      const q2 = await api('POST', '/api/v2/transaction', second.token, lnSend(pr))
      expect([q1.status, q2.status]).toEqual([200, 200])
      const confirms = await Promise.all([
        api('PUT', `/api/v2/transaction/${q1.body.txnId}/confirm`, alice.token),
        api('PUT', `/api/v2/transaction/${q2.body.txnId}/confirm`, second.token),
      ])
      expectNoServerErrors(confirms)
      for (let i = 0; i < 5; i++) await work()
      const finals = [(await stateOf(q1.body.txnId)).state, (await stateOf(q2.body.txnId)).state]
      expect(
        finals.filter((x) => x === 'completed'),
        JSON.stringify(finals),
      ).toHaveLength(1)
      expect(finals.filter((x) => x === 'failed')).toHaveLength(1)
      const failed = [q1, q2].map((q) => q.body.txnId as string)[finals.indexOf('failed')]!
      expect(['invoice_already_paid', 'payment_in_flight']).toContain((await stateOf(failed)).msg)
      charged += 10_000n
    }
    // The network was paid once per invoice, so the payers were charged once per invoice: the amount,
    // 10 sats of fee, and whatever routing fee the payment really took.
    const { rows } = await h.c.db.query<{ fee: bigint }>(
      `SELECT COALESCE(SUM(src_network_fee + src_fee), 0)::int8 AS fee FROM transactions
        WHERE account_id = ANY($1) AND kind = 'ln_send' AND state = 'completed'`,
      [[alice.accountId, bob.accountId]],
    )
    const a = await balance(alice.accountId)
    const b = await balance(bob.accountId)
    expect(a.pending + b.pending).toBe(0n)
    expect(2_000_000n - a.posted - b.posted).toBe(charged + rows[0]!.fee)
    expect(await historyProblems(h.c.db)).toEqual([])
    expect(await moneyProblems(h.c.db)).toEqual([])
    await finishCase('two sends of one outside invoice', h.c.db, { ops })
  })

  it('an invoice of ours paid by internal sends and an outside payer at once is paid exactly once', async () => {
    ops = 0
    const shop = await h.createAccount({ name: 'Shop 2' })
    const alice = await h.createAccount({ name: 'Alice' })
    const carol = await h.createAccount({ name: 'Carol' })
    const outside = await h.createAccount({ name: 'Outside' })
    await h.fund(alice.accountId, 'BTC', '0.01')
    await h.fund(carol.accountId, 'BTC', '0.01')
    const rounds = 8
    let paidOutside = 0
    for (let round = 0; round < rounds; round++) {
      const inv = await ourInvoice(shop, '0.0001')
      const qa = await api('POST', '/api/v2/transaction', alice.token, lnSend(inv.paymentRequest))
      const qc = await api('POST', '/api/v2/transaction', carol.token, lnSend(inv.paymentRequest))
      expect([qa.status, qc.status]).toEqual([200, 200])
      // Rounds 0-3: two internal sends race each other; rounds 4-7: an outside payer joins them.
      const withOutside = round >= 4
      const results = await Promise.all([
        api('PUT', `/api/v2/transaction/${qa.body.txnId}/confirm`, alice.token),
        api('PUT', `/api/v2/transaction/${qc.body.txnId}/confirm`, carol.token),
        ...(withOutside
          ? [api('POST', '/sandbox/lightning/pay', outside.token, { paymentRequest: inv.paymentRequest })]
          : []),
      ])
      expectNoServerErrors(results)
      await work()
      const internal = results.slice(0, 2).map((r) => r.body)
      const outsideOk = withOutside && results[2]!.status === 200
      if (outsideOk) paidOutside++
      const payments = internal.filter((t) => t.txnState === 'completed').length + (outsideOk ? 1 : 0)
      expect(
        payments,
        JSON.stringify({ internal: internal.map((t) => [t.txnState, t.msg]), outsideOk }),
      ).toBe(1)
      for (const t of internal.filter((x) => x.txnState !== 'completed')) {
        expect(t.txnState).toBe('failed')
        expect(t.msg).toBe('invoice_already_paid')
      }
      expect((await stateOf(inv.txnId)).state).toBe('completed')
    }
    // The same race in its worst order, one step at a time: the outside payer's payment is taken
    // (the receive is not completed until the worker sees it), then an internal send is confirmed.
    for (let round = 0; round < 2; round++) {
      const inv = await ourInvoice(shop, '0.0001')
      const q = await api('POST', '/api/v2/transaction', alice.token, lnSend(inv.paymentRequest))
      const pay = await api('POST', '/sandbox/lightning/pay', outside.token, {
        paymentRequest: inv.paymentRequest,
      })
      expect(pay.status).toBe(200)
      paidOutside++
      const c = await api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, alice.token)
      expect(c.status).toBe(200)
      expect({ state: c.body.txnState, msg: c.body.msg }).toEqual({
        state: 'failed',
        msg: 'invoice_already_paid',
      })
      await work()
      expect((await stateOf(inv.txnId)).state).toBe('completed')
    }
    // The shop is credited once per invoice; Alice and Carol paid for exactly the invoices nobody
    // outside paid (0.0001 BTC plus 10 sats of fee each).
    const invoices = rounds + 2
    expect(await balance(shop.accountId)).toEqual({ posted: BigInt(invoices) * 10_000n, pending: 0n })
    const aliceB = await balance(alice.accountId)
    const carolB = await balance(carol.accountId)
    expect(aliceB.pending + carolB.pending).toBe(0n)
    expect(2_000_000n - aliceB.posted - carolB.posted).toBe(BigInt(invoices - paidOutside) * 10_010n)
    expect(await historyProblems(h.c.db)).toEqual([])
    expect(await moneyProblems(h.c.db)).toEqual([])
    await finishCase('parallel Lightning payments of one invoice', h.c.db, {
      ops,
      detail: `${invoices} invoices, ${paidOutside} paid from outside`,
    })
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, type TestAccount } from '../../test/helpers/harness.js'

const DAY_MS = 86_400_000

// pagination.total is summed from per-day counts (migration 010) for the days wholly inside the
// window and counted from the rows for the partial days at its ends; these tests hold it to a plain
// count(*) over the transactions, across day boundaries and while transactions change state.
describe('transaction list: pagination.total', () => {
  let h: Harness
  let a: TestAccount
  const now = Date.now()

  beforeAll(async () => {
    h = await createHarness()
    a = await h.createAccount({ name: 'Historian' })
    await h.fund(a.accountId, 'BTC', '0.1')
    // A history written straight into the table, as the service's own writes are: the counts are
    // kept by the table's trigger. Rows sit on day boundaries, one millisecond either side of them,
    // and in between, over 40 days.
    const today = Math.floor(now / DAY_MS) * DAY_MS
    const times: number[] = []
    for (let d = 0; d < 40; d++) {
      const base = today - d * DAY_MS
      times.push(base, base - 1, base + 1, base + 43_210_987)
    }
    const states = ['completed', 'failed', 'quoted', 'expired', 'usercanceled']
    const methods: Array<[string, string]> = [
      ['svcpay', 'svcpay'],
      ['lightning', 'svcpay'],
      ['svcpay', 'on-chain'],
    ]
    await h.c.db.tx(async (q) => {
      for (const [i, t] of times.entries()) {
        const [src, dest] = methods[i % methods.length]!
        await q.query(
          `INSERT INTO transactions (id, account_id, request_hash, kind, state, src_ccy, src_method, src_amount,
             src_created_at, src_updated_at, dest_ccy, dest_method, dest_amount, dest_created_at, dest_updated_at,
             fx_rate, expires_at, created_at, updated_at)
           VALUES ($1, $2, 'h', 'swap', $3, 'BTC', $4, 1000, $5, $5, 'BTC', $6, 1000, $5, $5, '1', $5, $5, $5)`,
          [`txn_hist${String(i).padStart(21, '0')}`, a.accountId, states[i % states.length], src, t, dest],
        )
      }
    })
    // And live ones through the API: quoted, completed and cancelled swaps of today.
    const swap = () => ({
      sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.0001', reqDetails: {} },
      destReq: { ccy: 'USD', method: 'svcpay', reqDetails: {} },
    })
    for (let i = 0; i < 6; i++) {
      const q = await h.api('POST', '/api/v2/transaction', a.token, swap())
      if (i % 3 === 1) await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
      if (i % 3 === 2) await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/cancel`, a.token)
    }
  })
  afterAll(async () => h?.close())

  /** The total the API answers, and a plain count of the same matches. */
  async function both(query: string, where: string, params: unknown[]) {
    const r = await h.api('GET', `/api/v2/transaction?${query}`, a.token)
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    const { rows } = await h.c.db.query<{ n: bigint }>(
      `SELECT count(*)::int8 AS n FROM transactions WHERE account_id = $1 AND ${where}`,
      [a.accountId, ...params],
    )
    return { api: r.body.pagination.total as number, plain: Number(rows[0]!.n) }
  }

  it('counts every match of the preset windows, with and without filters', async () => {
    for (const time of ['1d', '7d', '30d', '3m']) {
      const days = { '1d': 1, '7d': 7, '30d': 30, '3m': 91 }[time]!
      // The window starts at the request's own clock, a few milliseconds after this one.
      const r = await both(`time=${time}`, 'created_at >= $2', [Date.now() - days * DAY_MS])
      expect(r.api, time).toBe(r.plain)
      const f = await both(
        `time=${time}&txnStatuses=completed,failed&srcMethods=svcpay`,
        `created_at >= $2 AND state IN ('completed', 'failed') AND src_method = 'svcpay'`,
        [Date.now() - days * DAY_MS],
      )
      expect(f.api, `${time} filtered`).toBe(f.plain)
      // Quotes are counted from the rows, not the day counts: alone and among other states.
      const q = await both(
        `time=${time}&txnStatuses=quoted,expired`,
        `created_at >= $2 AND state IN ('quoted', 'expired')`,
        [Date.now() - days * DAY_MS],
      )
      expect(q.api, `${time} quotes`).toBe(q.plain)
      expect(q.plain, `${time} quotes`).toBeGreaterThan(0)
    }
  })

  it('counts every match of custom windows that start and end on, beside and between day boundaries', async () => {
    const today = Math.floor(now / DAY_MS) * DAY_MS
    const edges = [
      -DAY_MS * 35 - 1,
      -DAY_MS * 35,
      -DAY_MS * 12 + 1,
      -DAY_MS * 3 + 43_210_987,
      -1,
      0,
      1,
      5_000_000,
    ]
    for (const from of edges) {
      for (const to of edges) {
        if (to < from) continue
        const start = new Date(today + from).toISOString()
        const end = new Date(today + to).toISOString()
        const r = await both(
          `time=other&startTime=${start}&endTime=${end}&excludedDestMethods=on-chain`,
          `created_at >= $2 AND created_at <= $3 AND NOT (dest_method = 'on-chain')`,
          [today + from, today + to],
        )
        expect(r.api, `${start} .. ${end}`).toBe(r.plain)
      }
    }
    const open = await both('time=other', 'true', [])
    expect(open.api).toBe(open.plain)
    const untilOnly = await both(
      `time=other&endTime=${new Date(today - 1).toISOString()}`,
      'created_at <= $2',
      [today - 1],
    )
    expect(untilOnly.api).toBe(untilOnly.plain)
  })

  it('follows state changes in the same transaction as they happen, and recounts to the same figures', async () => {
    const before = await both('time=1d&txnStatuses=quoted', `created_at >= $2 AND state = 'quoted'`, [
      Date.now() - DAY_MS,
    ])
    const q = await h.api('POST', '/api/v2/transaction', a.token, {
      sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.0001', reqDetails: {} },
      destReq: { ccy: 'VND', method: 'svcpay', reqDetails: {} },
    })
    const quoted = await both('time=1d&txnStatuses=quoted', `created_at >= $2 AND state = 'quoted'`, [
      Date.now() - DAY_MS,
    ])
    expect(quoted.api).toBe(before.api + 1)
    await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
    const after = await both('time=1d&txnStatuses=quoted', `created_at >= $2 AND state = 'quoted'`, [
      Date.now() - DAY_MS,
    ])
    expect(after.api).toBe(before.api)
    expect(after.api).toBe(after.plain)

    const kept = await h.c.db.query(
      'SELECT day, state, src_method, dest_method, n FROM transaction_day_counts WHERE account_id = $1 AND n <> 0 ORDER BY 1, 2, 3, 4',
      [a.accountId],
    )
    await h.c.db.query('SELECT transaction_day_counts_refresh($1)', [a.accountId])
    const recounted = await h.c.db.query(
      'SELECT day, state, src_method, dest_method, n FROM transaction_day_counts WHERE account_id = $1 AND n <> 0 ORDER BY 1, 2, 3, 4',
      [a.accountId],
    )
    expect(recounted.rows).toEqual(kept.rows)
    await h.expectBooksBalanced()
  })

  it('refuses a custom window on a day that does not exist instead of rolling it over', async () => {
    for (const [name, value] of [
      ['startTime', '2021-02-30T00:00:00Z'],
      ['endTime', '2021-04-31'],
      ['startTime', '2021-02-29T00:00:00Z'],
      ['endTime', '2021-01-01T24:00:00Z'],
    ] as const) {
      const r = await h.api('GET', `/api/v2/transaction?time=other&${name}=${value}`, a.token)
      expect(r.status, `${name}=${value}`).toBe(400)
      expect(r.body.details, `${name}=${value}`).toEqual([
        { field: `query.${name}`, issue: 'must be an ISO 8601 time' },
      ])
    }
    const leap = await h.api('GET', '/api/v2/transaction?time=other&startTime=2024-02-29T00:00:00Z', a.token)
    expect(leap.status).toBe(200)
  })

  it('counts nothing of a transaction whose creation rolled back', async () => {
    const before = await both('time=other', 'true', [])
    await expect(
      h.c.db.tx(async (q) => {
        await q.query(
          `INSERT INTO transactions (id, account_id, request_hash, kind, state, src_ccy, src_method, src_amount,
             src_created_at, src_updated_at, dest_ccy, dest_method, dest_amount, dest_created_at, dest_updated_at,
             fx_rate, expires_at, created_at, updated_at)
           VALUES ('txn_rolledback000000000000000', $1, 'h', 'swap', 'quoted', 'BTC', 'svcpay', 1, $2, $2, 'USD',
             'svcpay', 1, $2, $2, '1', $2, $2, $2)`,
          [a.accountId, Date.now()],
        )
        throw new Error('roll back')
      }),
    ).rejects.toThrow('roll back')
    const after = await both('time=other', 'true', [])
    expect(after).toEqual(before)
  })
})

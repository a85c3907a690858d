import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, ENGINE, type Harness } from '../../test/helpers/harness.js'

/**
 * Operator capital (POST /admin/capital): booked once per reference against equity, audited, seen by
 * reconciliation as part of what the books say the rail holds, and never an orphan.
 */
describe(`operator capital (${ENGINE})`, () => {
  let h: Harness
  beforeAll(async () => {
    h = await createHarness()
  }, 120_000)
  afterAll(() => h?.close())

  const book = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    h.app
      .inject({
        method: 'POST',
        url: '/admin/capital',
        headers: { authorization: `Bearer ${h.adminToken}`, 'content-type': 'application/json', ...headers },
        payload: JSON.stringify(body),
      })
      .then((r) => ({ status: r.statusCode, body: JSON.parse(r.body) }))
  const sum = async (account: string) =>
    BigInt(
      (
        await h.c.db.query<{ total: unknown }>(
          'SELECT COALESCE(SUM(amount), 0)::int8 AS total FROM postings WHERE ledger_account_id = $1',
          [account],
        )
      ).rows[0]!.total as bigint,
    )

  it('books money put on a rail against equity, once per reference, and says so when replayed', async () => {
    const first = await book(
      { rail: 'tron', ccy: 'USDT', amount: '1000.5', note: 'hot wallet funded' },
      { 'idempotency-key': 'fund-tron-1' },
    )
    expect(first.status, JSON.stringify(first.body)).toBe(200)
    expect(first.body).toMatchObject({
      reference: 'fund-tron-1',
      rail: 'tron',
      ccy: 'USDT',
      direction: 'in',
      amount: '1000.5',
      operatorId: 'system',
      replayed: false,
    })
    const again = await book({
      rail: 'tron',
      ccy: 'USDT',
      amount: '1000.5',
      note: 'hot wallet funded',
      reference: 'fund-tron-1',
    })
    expect([again.status, again.body.replayed, again.body.id]).toEqual([200, true, first.body.id])
    expect(await sum('sys:tron:USDT')).toBe(-1_000_500_000n)
    expect(await sum('sys:capital:USDT')).toBe(1_000_500_000n)
    await h.expectBooksBalanced()

    // The same reference for another movement is refused, and books nothing.
    const other = await book({ rail: 'tron', ccy: 'USDT', amount: '1', note: 'x', reference: 'fund-tron-1' })
    expect([other.status, other.body.error]).toEqual([409, 'duplicate_ext_ref_id'])
    expect(await sum('sys:tron:USDT')).toBe(-1_000_500_000n)

    // The audit trail holds a row per answered request (the booking and its replay), none for the refusal.
    const { rows } = await h.c.db.query(
      `SELECT action, target FROM admin_audit WHERE action = 'capital.book'`,
    )
    expect(rows.length).toBe(2)
    expect(rows[0]).toMatchObject({ target: 'reference=fund-tron-1' })
  })

  it('refuses a wrong currency, no reference, or a reference that disagrees with the header', async () => {
    const wrong = await book({ rail: 'bank', ccy: 'USDT', amount: '1', note: 'x', reference: 'r1' })
    expect([wrong.status, wrong.body.error]).toEqual([400, 'invalid_request'])
    const none = await book({ rail: 'bank', ccy: 'VND', amount: '1', note: 'x' })
    expect([none.status, none.body.details[0].field]).toEqual([400, 'reference'])
    const both = await book(
      { rail: 'bank', ccy: 'VND', amount: '1', note: 'x', reference: 'a' },
      { 'idempotency-key': 'b' },
    )
    expect(both.status).toBe(400)
    const zero = await book({ rail: 'bank', ccy: 'VND', amount: '0', note: 'x', reference: 'z' })
    expect([zero.status, zero.body.error]).toEqual([400, 'invalid_amount'])
  })

  it('is part of what the books say the rail holds, shown as capital, and never an orphan', async () => {
    const out = await book({
      rail: 'tron',
      ccy: 'USDT',
      direction: 'out',
      amount: '0.5',
      note: 'fees taken',
      reference: 'withdraw-1',
    })
    expect(out.status).toBe(200)
    const r = await h.api('GET', '/admin/reconciliation', h.adminToken)
    const tron = r.body.rails.find((e: any) => e.rail === 'tron')
    expect(tron).toMatchObject({ ledger: '1000', capital: '1000' })
    expect(r.body.orphans.filter((o: any) => o.rail === 'tron')).toEqual([])
    const list = await h.api('GET', '/admin/capital', h.adminToken)
    expect(list.body.data.map((c: any) => [c.reference, c.direction, c.amount])).toEqual([
      ['withdraw-1', 'out', '0.5'],
      ['fund-tron-1', 'in', '1000.5'],
    ])
  })
})

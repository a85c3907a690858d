import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness } from '../../test/helpers/harness.js'
import { getTxn, scheduleCheck, setRailRef } from './repository.js'
import { asTxnId, type TxnId } from '../shared/ids.js'

/** `scheduleCheck`'s modes, against the real database of either engine. */
describe('scheduleCheck', () => {
  let h: Harness
  let id: TxnId

  async function nextCheck(): Promise<number | null> {
    const { rows } = await h.c.db.query<{ n: string | null }>(
      'SELECT next_check_at::text AS n FROM transactions WHERE id = $1',
      [id],
    )
    return rows[0]!.n === null ? null : Number(rows[0]!.n)
  }
  async function setTo(at: number | null) {
    await scheduleCheck(h.c.db, id, at, 'exact')
    expect(await nextCheck()).toBe(at)
  }

  beforeAll(async () => {
    h = await createHarness({ QUOTE_TTL_S: '60' })
    const a = await h.createAccount({ name: 'Scheduler' })
    await h.fund(a.accountId, 'BTC', '1')
    const q = await h.api('POST', '/api/v2/transaction', a.token, {
      sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: 0.001, reqDetails: {} },
      destReq: { ccy: 'VND', method: 'svcpay', reqDetails: {} },
    })
    expect(q.status).toBe(200)
    id = asTxnId(q.body.txnId)
  })
  afterAll(() => h?.close())

  it("'earliest' keeps an earlier check and brings a later one forward", async () => {
    await setTo(5_000)
    expect(await scheduleCheck(h.c.db, id, 9_000, 'earliest')).toBe(true)
    expect(await nextCheck()).toBe(5_000)
    await scheduleCheck(h.c.db, id, 2_000, 'earliest')
    expect(await nextCheck()).toBe(2_000)
    await setTo(null)
    await scheduleCheck(h.c.db, id, 7_000, 'earliest')
    expect(await nextCheck()).toBe(7_000)
  })

  it("'exact' replaces the check, earlier or later, and clears it with null", async () => {
    await setTo(5_000)
    await setTo(9_000)
    await setTo(1_000)
    await setTo(null)
  })

  it("'latest' never brings a check forward, and sets an unset one", async () => {
    await setTo(5_000)
    await scheduleCheck(h.c.db, id, 2_000, 'latest')
    expect(await nextCheck()).toBe(5_000)
    await scheduleCheck(h.c.db, id, 9_000, 'latest')
    expect(await nextCheck()).toBe(9_000)
    await setTo(null)
    await scheduleCheck(h.c.db, id, 3_000, 'latest')
    expect(await nextCheck()).toBe(3_000)
  })

  it('leaves the row alone when it has moved on or, if asked, has no check', async () => {
    await setTo(5_000)
    expect(await scheduleCheck(h.c.db, id, 1_000, 'exact', { state: 'completed' })).toBe(false)
    expect(await nextCheck()).toBe(5_000)
    expect(await scheduleCheck(h.c.db, id, 1_000, 'exact', { state: 'quoted' })).toBe(true)
    expect(await nextCheck()).toBe(1_000)
    await setTo(null)
    expect(await scheduleCheck(h.c.db, id, 8_000, 'latest', { scheduled: true })).toBe(false)
    expect(await nextCheck()).toBe(null)
  })

  it('sets the rows of a kind that a rail knows by a reference, and no other', async () => {
    const { kind } = (await getTxn(h.c.db, id))!
    await setRailRef(h.c.db, id, 'ref-1')
    await setTo(5_000)
    const other = kind === 'ln_receive' ? 'ln_send' : 'ln_receive'
    expect(await scheduleCheck(h.c.db, { kind: other, railRef: 'ref-1' }, 1_000, 'exact')).toBe(false)
    expect(await scheduleCheck(h.c.db, { kind, railRef: 'ref-2' }, 1_000, 'exact')).toBe(false)
    expect(await nextCheck()).toBe(5_000)
    expect(await scheduleCheck(h.c.db, { kind, railRef: 'ref-1' }, 1_000, 'exact', { state: 'quoted' })).toBe(
      true,
    )
    expect(await nextCheck()).toBe(1_000)
  })
})

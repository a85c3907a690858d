import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, type TestAccount } from '../../test/helpers/harness.js'

// Issue 16, defect 9: paging by page number while transactions arrive repeated rows (every insert
// shifts the offsets). The cursor (startingAfter / endingBefore) seeks by (created_at, id) instead.

const receive = (n: number) => ({
  sourceReq: { ccy: 'BTC', method: 'lightning', reqDetails: {} },
  destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: (0.00001 * (n + 1)).toFixed(8), reqDetails: {} },
})

describe('transaction list: cursor paging', () => {
  let h: Harness
  let a: TestAccount
  let other: TestAccount
  const initial: string[] = []
  let n = 0
  beforeAll(async () => {
    h = await createHarness()
    a = await h.createAccount({ name: 'Pager' })
    other = await h.createAccount({ name: 'Other' })
    for (let i = 0; i < 17; i++) initial.push(await create())
    // Newest first, as the list orders them.
    initial.reverse()
  })
  afterAll(async () => h?.close())

  async function create(): Promise<string> {
    const r = await h.api('POST', '/api/v2/transaction', a.token, receive(n++))
    expect(r.status).toBe(200)
    return r.body.txnId
  }
  const list = (query: string) => h.api('GET', `/api/v2/transaction?${query}`, a.token)

  it('pages forward with startingAfter while transactions are created: no duplicates, no gaps', async () => {
    const seen: string[] = []
    let cursor: string | undefined
    let pages = 0
    for (;;) {
      const r = await list(`limit=5${cursor ? `&startingAfter=${cursor}` : ''}`)
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      const ids = r.body.data.map((t: any) => t.txnId as string)
      seen.push(...ids)
      pages++
      // New transactions arrive between every two pages.
      await create()
      await create()
      if (!r.body.pagination.hasMore) break
      expect(ids).toHaveLength(5)
      cursor = ids[ids.length - 1]
      expect(pages).toBeLessThan(10)
    }
    expect(new Set(seen).size).toBe(seen.length)
    // The first page was read before any of the new ones existed: from there on, exactly the rows
    // that existed, in the list's order.
    expect(seen).toEqual(initial)
    expect(pages).toBe(4)
  })

  it('pages backward with endingBefore, each page in the list order, and says when there is no more', async () => {
    const last = initial[initial.length - 1]!
    const seen: string[] = []
    let cursor = last
    for (let pages = 0; pages < 10; pages++) {
      const r = await list(`limit=4&endingBefore=${cursor}`)
      expect(r.status).toBe(200)
      const ids = r.body.data.map((t: any) => t.txnId as string)
      seen.unshift(...ids)
      if (!r.body.pagination.hasMore) break
      cursor = ids[0]
    }
    // Everything newer than the oldest: the 16 others of the first batch and all created since.
    expect(new Set(seen).size).toBe(seen.length)
    expect(seen.slice(-16)).toEqual(initial.slice(0, 16))
    const everything = await list('limit=100')
    expect(seen).toEqual(everything.body.data.map((t: any) => t.txnId).slice(0, seen.length))
    expect(seen.length).toBe(everything.body.data.length - 1)
  })

  it('reports hasMore on numbered pages too, and total counts every match whatever the cursor', async () => {
    const all = await list('limit=100')
    const total = all.body.data.length
    expect(all.body.pagination).toEqual({ page: 1, limit: 100, total, hasMore: false })
    expect((await list('limit=5')).body.pagination).toMatchObject({ page: 1, hasMore: true, total })
    const lastPage = Math.ceil(total / 5)
    expect((await list(`limit=5&page=${lastPage}`)).body.pagination.hasMore).toBe(false)
    const after = await list(`limit=5&startingAfter=${all.body.data[total - 2].txnId}`)
    expect(after.body.data.map((t: any) => t.txnId)).toEqual([all.body.data[total - 1].txnId])
    expect(after.body.pagination).toEqual({ page: 1, limit: 5, total, hasMore: false })
  })

  it('refuses a cursor that is not a txnId of this account, both cursors, or a cursor with a page', async () => {
    const mine = initial[3]!
    const theirs = (await h.api('POST', '/api/v2/transaction', other.token, receive(1))).body.txnId
    for (const [query, field] of [
      [`startingAfter=${theirs}`, 'query.startingAfter'],
      [`endingBefore=txn_doesnotexist`, 'query.endingBefore'],
      [`startingAfter=${encodeURIComponent("x' OR 1=1")}`, 'query.startingAfter'],
      [`startingAfter=${mine}&endingBefore=${mine}`, 'query.endingBefore'],
      [`startingAfter=${mine}&page=2`, 'query.page'],
    ]) {
      const r = await list(query!)
      expect(r.status, query).toBe(400)
      expect(r.body.error).toBe('invalid_request')
      expect(r.body.details[0].field).toBe(field)
      // The message never repeats the value sent.
      expect(r.body.message).not.toContain(theirs)
    }
    expect((await list(`startingAfter=${mine}&page=1`)).status).toBe(200)
  })

  it('applies the filters beside the cursor', async () => {
    const cancelled = initial[5]!
    await h.api('PUT', `/api/v2/transaction/${cancelled}/cancel`, a.token)
    const r = await list(`txnStatuses=quoted&startingAfter=${initial[2]}&limit=100`)
    const ids = r.body.data.map((t: any) => t.txnId)
    expect(ids).toEqual(initial.slice(3).filter((id) => id !== cancelled))
  })
})

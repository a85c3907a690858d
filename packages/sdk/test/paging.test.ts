import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SvcpayClient } from '@svcpay/sdk'
import { startServer, type TestServer } from './server.js'

// The list walk of the SDK pages by cursor (issue 16, defect 9): transactions created while it walks
// must neither show up twice nor push an older one out of the walk.

describe('listAllTransactions: paging by cursor while transactions arrive', () => {
  let s: TestServer
  let client: SvcpayClient
  let n = 0
  beforeAll(async () => {
    s = await startServer()
    client = new SvcpayClient({
      baseUrl: s.baseUrl,
      apiKey: s.account.apiKey,
      apiSecret: s.account.apiSecret,
    })
  })
  afterAll(() => s.close())

  const create = async () =>
    (
      await client.createTransaction({
        sourceReq: { ccy: 'BTC', method: 'lightning', reqDetails: {} },
        destReq: { ccy: 'BTC', method: 'svcpay', amtRequested: `0.0000${10 + n++}`, reqDetails: {} },
      })
    ).txnId

  it('walks every transaction that existed once, in order, while new ones are created', async () => {
    const existing: string[] = []
    for (let i = 0; i < 13; i++) existing.unshift(await create())
    const seen: string[] = []
    for await (const txn of client.listAllTransactions({ limit: 4 })) {
      seen.push(txn.txnId)
      // Two new transactions at every page boundary, the moment that broke numbered pages.
      if (seen.length % 4 === 0) {
        await create()
        await create()
      }
    }
    expect(new Set(seen).size).toBe(seen.length)
    expect(seen).toEqual(existing)
  })

  it('starts after a given transaction and keeps the filters', async () => {
    const all: string[] = []
    for await (const txn of client.listAllTransactions({ txnStatuses: 'quoted' })) all.push(txn.txnId)
    expect(all.length).toBeGreaterThan(13)
    const rest: string[] = []
    for await (const txn of client.listAllTransactions({ startingAfter: all[9], limit: 3 }))
      rest.push(txn.txnId)
    expect(rest).toEqual(all.slice(10))
    const page = await client.listTransactions({ limit: 3, endingBefore: all[5] })
    expect(page.data.map((t) => t.txnId)).toEqual(all.slice(2, 5))
    expect(page.pagination).toMatchObject({ limit: 3, hasMore: true })
  })
})

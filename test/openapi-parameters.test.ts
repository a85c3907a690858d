import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TXN_STATES } from '../src/shared/txn-states.js'
import { LIST_METHODS } from '../src/transactions/list.js'
import { createHarness, type Harness, type TestAccount } from './helpers/harness.js'

/**
 * The parameters of /openapi.json as client generators read them: page sizes and numbers are
 * integers (a generated client passes `limit: 2`, not `'2'`), the filters list the values the
 * service takes, and the token exchange's two headers are required. The service itself takes the
 * query exactly as before (query values arrive as text); each documented value is accepted by it,
 * and the values just outside the documented ranges are refused.
 */

type Json = Record<string, any>

describe('the parameters of the OpenAPI document', () => {
  let h: Harness
  let doc: Json
  let acct: TestAccount

  beforeAll(async () => {
    h = await createHarness()
    acct = await h.createAccount()
    doc = JSON.parse((await h.app.inject({ method: 'GET', url: '/openapi.json' })).body)
  })
  afterAll(() => h?.close())

  const param = (path: string, method: string, name: string): Json => {
    const found = (doc.paths[path][method].parameters as Json[]).find((p) => p.name === name)
    expect(found, `${method} ${path} ${name}`).toBeDefined()
    return found!
  }
  const list = (query: string) => h.api('GET', `/api/v2/transaction?${query}`, acct.token)

  it('types the list of transactions: integer limit and page, an enum for time, lists of states and methods', () => {
    const path = '/api/v2/transaction'
    expect(param(path, 'get', 'limit').schema).toEqual({
      type: 'integer',
      minimum: 1,
      maximum: 100,
      default: 20,
    })
    expect(param(path, 'get', 'page').schema).toMatchObject({ type: 'integer', minimum: 1, default: 1 })
    expect(param(path, 'get', 'time').schema).toMatchObject({
      type: 'string',
      enum: ['1d', '7d', '30d', '3m', '6m', '1y', 'other'],
      default: '30d',
    })
    const statuses = param(path, 'get', 'txnStatuses')
    expect(statuses).toMatchObject({ style: 'form', explode: false })
    expect(statuses.schema).toMatchObject({ type: 'array', items: { type: 'string', enum: [...TXN_STATES] } })
    for (const name of ['srcMethods', 'destMethods', 'excludedSrcMethods', 'excludedDestMethods']) {
      const p = param(path, 'get', name)
      expect(p, name).toMatchObject({ style: 'form', explode: false })
      expect(p.schema, name).toMatchObject({ type: 'array', items: { type: 'string', enum: LIST_METHODS } })
    }
  })

  it('types the deliveries of a webhook the same way', () => {
    const path = '/api/v2/webhook/{webhookId}/deliveries'
    expect(param(path, 'get', 'limit').schema).toEqual({
      type: 'integer',
      minimum: 1,
      maximum: 100,
      default: 20,
    })
    expect(param(path, 'get', 'page').schema).toMatchObject({ type: 'integer', minimum: 1, default: 1 })
    expect(param(path, 'get', 'status').schema).toMatchObject({
      type: 'string',
      enum: ['pending', 'succeeded', 'failed', 'cancelled'],
    })
  })

  it('requires the two headers of the token exchange', () => {
    const path = '/api/v2/authentication/token-signature'
    for (const name of ['x-api-key', 'x-api-signature']) {
      expect(param(path, 'post', name).required, name).toBe(true)
    }
  })

  it('accepts every documented value, as a generated client sends it', async () => {
    const time = param('/api/v2/transaction', 'get', 'time').schema.enum as string[]
    for (const t of time) expect((await list(`time=${t}`)).status, t).toBe(200)
    const states = param('/api/v2/transaction', 'get', 'txnStatuses').schema.items.enum as string[]
    expect((await list(`txnStatuses=${states.join(',')}`)).status).toBe(200)
    const methods = param('/api/v2/transaction', 'get', 'srcMethods').schema.items.enum as string[]
    expect((await list(`srcMethods=${methods.join(',')}&excludedDestMethods=${methods[0]}`)).status).toBe(200)
    for (const limit of ['1', '100']) expect((await list(`limit=${limit}&page=1`)).status, limit).toBe(200)
  })

  it('takes the query as it did before: text of digits, an empty value for the default; other numbers refused', async () => {
    expect((await list('limit=007')).body.pagination.limit).toBe(7)
    expect((await list('limit=&page=')).body.pagination).toMatchObject({ limit: 20, page: 1 })
    for (const limit of ['0', '101', '1.0', '1e1', '-1', ' 2', 'two']) {
      const r = await list(`limit=${encodeURIComponent(limit)}`)
      expect(r.status, limit).toBe(400)
      expect(r.body.details, limit).toEqual([
        { field: 'query.limit', issue: 'must be a whole number from 1 to 100' },
      ])
    }
    expect((await list('time=2d')).status).toBe(400)
    expect((await list('txnStatuses=done')).status).toBe(400)
  })
})

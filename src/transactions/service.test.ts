import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import type { Db } from '../db/db.js'
import { ApiError } from '../shared/errors.js'
import { flowOf, type Flow } from './flow.js'
import { createTxnRepository, getTxn } from './repository.js'
import type { Txn } from './txn.js'
import { createRecentQuotes, settledAnswer, settleMadeHere } from './service.js'
import { asAccountId, asTxnId } from '../shared/ids.js'

const row = (id: string) => ({ id }) as Txn

describe('createRecentQuotes', () => {
  it('gives a quote back once, then forgets it', () => {
    const quotes = createRecentQuotes()
    quotes.remember(row('txn_a'))
    expect(quotes.take(asTxnId('txn_a'))?.id).toBe('txn_a')
    expect(quotes.take(asTxnId('txn_a'))).toBeUndefined()
    expect(quotes.take(asTxnId('txn_never'))).toBeUndefined()
  })

  it('holds at most its bound, forgetting the oldest first', () => {
    const quotes = createRecentQuotes(2)
    for (const id of ['txn_1', 'txn_2', 'txn_3']) quotes.remember(row(id))
    expect(quotes.take(asTxnId('txn_1'))).toBeUndefined()
    expect(quotes.take(asTxnId('txn_2'))?.id).toBe('txn_2')
    expect(quotes.take(asTxnId('txn_3'))?.id).toBe('txn_3')
  })
})

describe('settledAnswer', () => {
  const code = (state: Txn['state'], msg = '') => {
    try {
      settledAnswer({ state, msg })
      return 'answered'
    } catch (err) {
      return (err as ApiError).code
    }
  }

  it('is undefined for a quote, the row for a transaction past quoted, an error for one that ended unconfirmed', () => {
    expect(settledAnswer({ state: 'quoted', msg: '' })).toBeUndefined()
    expect(code('completed')).toBe('answered')
    expect(code('expired', 'other')).toBe('answered')
    expect(code('usercanceled')).toBe('invalid_state')
    expect(code('expired', 'quote_expired')).toBe('quote_expired')
  })
})

describe('flowOf', () => {
  it('finds the flow of a kind, and refuses a kind this server does not offer', () => {
    const swap = { kind: 'swap' } as Flow
    const flows = new Map([['swap', swap]] as const)
    expect(flowOf(flows, 'swap')).toBe(swap)
    expect(() => flowOf(flows, 'tron_payout')).toThrow(
      expect.objectContaining({ code: 'method_not_available' }) as Error,
    )
  })
})

// The one-statement confirm, called alone on a real database: it settles a swap quote of the
// account before its deadline, and steps aside, writing nothing, in every other case.
describe('settleMadeHere', () => {
  let h: Harness
  let a: TestAccount
  let swap: Flow

  beforeAll(async () => {
    h = await createHarness({ QUOTE_TTL_S: '60' })
    a = await h.createAccount({ name: 'Settle here' })
    await h.fund(a.accountId, 'BTC', '0.01')
    swap = h.c.transactions.flows.get('swap')!
  })
  afterAll(async () => h?.close())

  // Statements sent through the deps: stepping aside sends none.
  let sent = 0
  const deps = (now = Date.now) => ({
    db: {
      ...h.c.db,
      query: ((sql: string, params?: unknown[]) => {
        sent++
        return h.c.db.query(sql, params)
      }) as Db['query'],
    },
    repository: createTxnRepository({ webhookVariant: h.c.config.webhookVariant, now, kinds: h.c.kinds }),
  })
  const quote = async (): Promise<Txn> => {
    const r = await h.api('POST', '/api/v2/transaction', a.token, {
      sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.0001', reqDetails: {} },
      destReq: { ccy: 'USD', method: 'svcpay', reqDetails: {} },
    })
    expect(r.status).toBe(200)
    return (await getTxn(h.c.db, r.body.txnId))!
  }
  const stateOf = async (txnId: string) => (await getTxn(h.c.db, asTxnId(txnId)))?.state

  it('settles a swap quote of the account in one go', async () => {
    const quoted = await quote()
    const settled = await settleMadeHere(deps(), swap, quoted, a.accountId)
    expect(settled?.state).toBe('completed')
    expect(settled?.destSettledMinor).toBe(quoted.destAmountMinor)
    expect(await stateOf(quoted.id)).toBe('completed')
    await h.expectBooksBalanced()
  })

  it('steps aside for another account, a quote past its deadline and a flow with work outside the database', async () => {
    const quoted = await quote()
    sent = 0
    expect(await settleMadeHere(deps(), swap, quoted, asAccountId('acc_someone_else'))).toBeUndefined()
    const late = () => Number(quoted.expiresAtMs)
    expect(await settleMadeHere(deps(late), swap, quoted, a.accountId)).toBeUndefined()
    const preparing: Flow = { ...swap, prepareConfirm: async () => undefined }
    expect(await settleMadeHere(deps(), preparing, quoted, a.accountId)).toBeUndefined()
    const confirming: Flow = { ...swap, settlement: undefined }
    expect(await settleMadeHere(deps(), confirming, quoted, a.accountId)).toBeUndefined()
    expect(sent).toBe(0)
    expect(await stateOf(quoted.id)).toBe('quoted')
  })
})

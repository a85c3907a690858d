import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  PAYMENT_METHODS,
  SvcpayClient,
  SvcpayValidationError,
  type CreateTransactionRequest,
  type EthPayoutDetails,
  type EthPayoutResultDetails,
} from '@svcpay/sdk'
import { startServer, type TestServer } from './server.js'

const ADDRESS = '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB'

const payout = (details: EthPayoutDetails, amount: string): CreateTransactionRequest => ({
  sourceReq: { ccy: 'USDT', method: 'svcpay', reqDetails: {} },
  destReq: { ccy: 'USDT', method: 'eth', amtRequested: amount, reqDetails: { ...details } },
})

/** The SDK pays USDT out over Ethereum on the sandbox, as the README's quick start does. */
describe('SDK: USDT over Ethereum (eth)', () => {
  let s: TestServer
  let client: SvcpayClient
  beforeAll(async () => {
    s = await startServer({ SANDBOX_PAYOUT_DELAY_MS: '200' }, { workers: true })
    client = new SvcpayClient({
      baseUrl: s.baseUrl,
      apiKey: s.account.apiKey,
      apiSecret: s.account.apiSecret,
    })
    await client.sandbox.fund({ ccy: 'USDT', amount: '100' })
  }, 60_000)
  afterAll(() => s?.close())

  it('names the method', () => {
    expect(PAYMENT_METHODS).toContain('eth')
  })

  it('quotes, confirms and follows an eth payout to completed, with exact amounts', async () => {
    const quote = await client.createTransaction(payout({ address: ADDRESS.toLowerCase() }, '25'))
    expect(quote.txnState).toBe('quoted')
    expect(quote.sourceReq.svcpayFees).toBe('0.05')
    expect(quote.sourceReq.networkFees).toBe('4.420652')
    const details = quote.destReq.reqDetails as unknown as EthPayoutResultDetails
    expect(details).toEqual({ address: ADDRESS, maxFeeWei: '1300000000000000' })
    await client.confirmTransaction(quote.txnId)
    const done = await client.waitForTransaction(quote.txnId, { timeoutMs: 20_000 })
    expect(done.txnState).toBe('completed')
    const sent = done.destReq.reqDetails as unknown as EthPayoutResultDetails
    expect(sent.txHash).toMatch(/^0x[0-9a-f]{64}$/)
    expect(sent.chainFeeEth).toBe('0.000552')
    expect((await client.walletFor('USDT'))?.amount).toBe('70.529348')
  })

  it('answers a mistyped address with a validation error naming the field', async () => {
    const bad = ADDRESS.replace('dbF', 'dbf')
    const err = await client.createTransaction(payout({ address: bad }, '1')).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(SvcpayValidationError)
    expect((err as SvcpayValidationError).code).toBe('invalid_address')
    expect((err as SvcpayValidationError).details?.[0]?.field).toBe('destReq.reqDetails.address')
  })
})

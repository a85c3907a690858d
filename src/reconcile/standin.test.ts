import { createServer } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness } from '../../test/helpers/harness.js'
import { startBankStandin, type BankStandin } from '../../test/standins/bank.js'

/**
 * Reconciliation against real adapters pointed at the stand-ins (test/standins): the bank partner's
 * balance endpoint through its adapter's check(), a partner that hangs, and a Lightning node that is
 * not there. The bank adapter reads the partner's balance and payouts (reserves(), payments()).
 */
const API_KEY = 'partner-key-reconcile'
const SIGNING = 'reconcile-signing-secret-0123456789'

async function closedPort(): Promise<number> {
  const srv = createServer()
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve))
  const { port } = srv.address() as { port: number }
  await new Promise((resolve) => srv.close(resolve))
  return port
}

describe('reconciliation against the stand-ins', () => {
  let h: Harness
  let bank: BankStandin
  const reconcile = async () => {
    const r = await h.api('GET', '/admin/reconciliation', h.adminToken)
    expect(r.status).toBe(200)
    return r.body
  }
  const rail = (r: any, name: string) => r.rails.find((e: any) => e.rail === name)

  beforeAll(async () => {
    bank = await startBankStandin({ apiKey: API_KEY, signingSecret: SIGNING, balance: '120000000' })
    h = await createHarness({
      LIGHTNING: 'lnd',
      LND_REST_URL: `http://127.0.0.1:${await closedPort()}`,
      LND_MACAROON_HEX: '0201036c6e64',
      VND: 'bank-http',
      BANK_PAYOUT_URL: bank.url,
      BANK_PAYOUT_API_KEY: API_KEY,
      BANK_PAYOUT_SIGNING_SECRET: SIGNING,
      RAILS_CHECK_TIMEOUT_MS: '2000',
    })
  }, 120_000)
  afterAll(async () => {
    await h?.close()
    await bank?.stop()
  })

  it("reads the bank partner's balance; the operator's float there is a surplus, not a deficit", async () => {
    const r = await reconcile()
    expect(rail(r, 'bank')).toMatchObject({
      adapter: 'bank-http',
      source: 'reserves',
      ledger: '0',
      reported: '120000000',
      incoming: '0',
      delta: '120000000',
      status: 'surplus',
    })
    // The Lightning node is down: unknown, never zero, and no deficit.
    expect(rail(r, 'lightning')).toMatchObject({
      adapter: 'lnd',
      status: 'unknown',
      reported: null,
      delta: null,
    })
    expect(r.ok).toBe(true)
    expect(r.incomplete).toBe(true)
    // The bank partner and the sandbox chain list their payments (none yet): matched, with nothing
    // to report. Only the Lightning node that is not there is left unmatched.
    expect(r.unmatched.map((u: any) => u.rail)).toEqual(['lightning'])
    expect(JSON.stringify(r)).not.toMatch(/secret-0123|0201036c6e64/)
  }, 30_000)

  it('a partner that hangs is unknown within the time limit, and no deficit', async () => {
    bank.failNext('hang')
    const started = Date.now()
    const r = await reconcile()
    expect(rail(r, 'bank')).toMatchObject({
      status: 'unknown',
      note: 'no answer within 2000 ms',
      delta: null,
    })
    expect(Date.now() - started).toBeLessThan(10_000)
    expect(r.ok).toBe(true)
  }, 30_000)
})

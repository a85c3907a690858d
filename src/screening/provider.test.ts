import { describe, expect, it } from 'vitest'
import { ENGINE } from '../../test/helpers/harness.js'
import { admin, REFUSAL, sends, setUp, standInProvider, TRON_ADDRESS } from '../../test/helpers/screening.js'

describe(`screening provider (${ENGINE})`, () => {
  it('asks the provider at quote and not at confirm, refuses its hit, and refuses when it is down (SCREENING_ON_ERROR=refuse)', async () => {
    const provider = await standInProvider(new Set([TRON_ADDRESS]))
    const { h, a } = await setUp({
      SCREENING_URL: provider.url,
      SCREENING_API_KEY: 'provider-key',
      SCREENING_ALLOW_PRIVATE: 'true',
      SCREENING_TIMEOUT_MS: '500',
    })
    try {
      const hit = await h.api('POST', '/api/v2/transaction', a.token, sends.tron())
      expect([hit.status, hit.body]).toEqual([403, REFUSAL])
      expect(provider.asked[0]).toMatchObject({
        auth: 'Bearer provider-key',
        direction: 'out',
        destinations: [{ type: 'tron', value: TRON_ADDRESS }],
      })
      const clear = await h.api('POST', '/api/v2/transaction', a.token, sends['on-chain']())
      expect(clear.status).toBe(200)
      const askedBefore = provider.asked.length
      const c = await h.api('PUT', `/api/v2/transaction/${clear.body.txnId}/confirm`, a.token)
      expect(c.status, JSON.stringify(c.body)).toBe(200)
      expect(provider.asked.length).toBe(askedBefore)
      const hits = (await admin(h)('GET', `/admin/screening/hits`)).body.data
      expect(hits).toMatchObject([
        { kind: 'tron_payout', source: 'provider', entry: 'stand-in', outcome: 'refused' },
      ])

      await provider.close()
      const down = await h.api('POST', '/api/v2/transaction', a.token, sends['vnd-instant']())
      expect([down.status, down.body]).toEqual([403, REFUSAL])
    } finally {
      await provider.close().catch(() => {})
      await h.close()
    }
  }, 60_000)
})

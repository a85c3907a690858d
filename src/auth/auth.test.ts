import { createHmac } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness } from '../../test/helpers/harness.js'

describe('token exchange', () => {
  let h: Harness
  beforeAll(async () => {
    h = await createHarness()
  })
  afterAll(async () => h?.close())

  function sign(apiKey: string, secret: string, body: string) {
    return createHmac('sha256', secret).update(`${apiKey}&payload=${body}`).digest('hex')
  }
  async function exchange(apiKey: string, signature: string, body: string) {
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/v2/authentication/token-signature',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey, 'x-api-signature': signature },
      payload: body,
    })
    return { status: res.statusCode, body: JSON.parse(res.body) }
  }

  it('issues a token for a signature over the exact body, once', async () => {
    const acct = await h.createAccount()
    const body = '{ "a": 1,\n "b": "x" }'
    const sig = sign(acct.apiKey, acct.apiSecret, body)
    const first = await exchange(acct.apiKey, sig, body)
    expect(first.status).toBe(200)
    expect(first.body.accountId).toBe(acct.accountId)
    expect(first.body.expiredAt).toBeGreaterThan(Date.now() + 3500_000)
    const again = await exchange(acct.apiKey, sig, body)
    expect(again).toEqual({ status: 401, body: { error: 'signature_reused', message: expect.any(String) } })
    const wallets = await h.api('GET', `/api/v2/account/${acct.accountId}/wallet/`, first.body.accessToken)
    expect(wallets.status).toBe(200)
    expect(wallets.body.data.map((w: any) => w.ccy)).toEqual(['BTC', 'USDT', 'VND', 'USD', 'CAD'])
  })

  it('refuses a signature over re-serialised JSON and a wrong secret', async () => {
    const acct = await h.createAccount()
    const body = '{ "a": 1 }'
    expect((await exchange(acct.apiKey, sign(acct.apiKey, acct.apiSecret, '{"a":1}'), body)).body.error).toBe(
      'invalid_signature',
    )
    expect((await exchange(acct.apiKey, sign(acct.apiKey, 'sk_wrong', body), body)).body.error).toBe(
      'invalid_signature',
    )
    expect((await exchange('key_unknown', sign('key_unknown', acct.apiSecret, body), body)).body.error).toBe(
      'unauthorized',
    )
  })
})

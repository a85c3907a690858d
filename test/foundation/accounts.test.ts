import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, type TestAccount } from '../helpers/harness.js'

describe('accounts and wallets', () => {
  let h: Harness
  let parent: TestAccount
  let child: TestAccount
  let stranger: TestAccount
  beforeAll(async () => {
    h = await createHarness()
    parent = await h.createAccount({ name: 'Parent Co' })
    child = await h.createAccount({ name: 'Child shop', parentId: parent.accountId })
    stranger = await h.createAccount({ name: 'Stranger', tier: 'premium' })
  })
  afterAll(async () => h?.close())

  const unauthorized = { status: 401, body: { error: 'unauthorized', message: expect.any(String) } }
  const forbidden = { status: 403, body: { error: 'forbidden', message: expect.any(String) } }
  const notFound = { status: 404, body: { error: 'not_found', message: expect.any(String) } }
  const pick = (r: { status: number; body: any }) => ({ status: r.status, body: r.body })
  const walletOf = async (who: TestAccount, ccy: string) => {
    const r = await h.api('GET', `/api/v2/account/${who.accountId}/wallet/`, who.token)
    return r.body.data.find((w: any) => w.ccy === ccy)
  }

  it('reads its own account information', async () => {
    const r = await h.api('GET', `/api/v2/account/${child.accountId}`, child.token)
    expect(r.status).toBe(200)
    expect(r.body).toEqual({
      data: {
        id: child.accountId,
        displayName: 'Child shop',
        parentId: parent.accountId,
        tier: 'standard',
        createdAt: expect.any(Number),
      },
    })
    expect(
      (await h.api('GET', `/api/v2/account/${stranger.accountId}`, stranger.token)).body.data,
    ).toMatchObject({
      parentId: null,
      tier: 'premium',
    })
  })

  it('lists its own wallets: one per configured currency, empty, in order, with the spec fields', async () => {
    const r = await h.api('GET', `/api/v2/account/${parent.accountId}/wallet/`, parent.token)
    expect(r.status).toBe(200)
    expect(r.body.data.map((w: any) => w.ccy)).toEqual(['BTC', 'USDT', 'VND', 'USD', 'CAD'])
    for (const w of r.body.data) {
      expect(w).toEqual({
        id: expect.stringMatching(/^wal_[0-9a-z]{25}$/),
        ccy: w.ccy,
        amount: 0,
        availableBalance: 0,
        accountId: parent.accountId,
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      })
    }
    // The path without the trailing slash reaches the same list.
    expect((await h.api('GET', `/api/v2/account/${parent.accountId}/wallet`, parent.token)).body).toEqual(
      r.body,
    )
  })

  it('reads one of its own wallets', async () => {
    const btc = await walletOf(parent, 'BTC')
    const r = await h.api('GET', `/api/v2/account/${parent.accountId}/wallet/${btc.id}`, parent.token)
    expect(r).toMatchObject({ status: 200, body: { data: btc } })
  })

  it('lets a parent read its child: account, wallet list and a single wallet', async () => {
    expect((await h.api('GET', `/api/v2/account/${child.accountId}`, parent.token)).status).toBe(200)
    const list = await h.api('GET', `/api/v2/account/${child.accountId}/wallet/`, parent.token)
    expect(list.status).toBe(200)
    expect(list.body.data.every((w: any) => w.accountId === child.accountId)).toBe(true)
    const usd = list.body.data.find((w: any) => w.ccy === 'USD')
    const one = await h.api('GET', `/api/v2/account/${child.accountId}/wallet/${usd.id}`, parent.token)
    expect(one).toMatchObject({ status: 200, body: { data: usd } })
  })

  it('refuses a child reading its parent: 401 on account and list, 403 on a single wallet', async () => {
    const parentBtc = await walletOf(parent, 'BTC')
    expect(pick(await h.api('GET', `/api/v2/account/${parent.accountId}`, child.token))).toEqual(unauthorized)
    expect(pick(await h.api('GET', `/api/v2/account/${parent.accountId}/wallet/`, child.token))).toEqual(
      unauthorized,
    )
    expect(
      pick(await h.api('GET', `/api/v2/account/${parent.accountId}/wallet/${parentBtc.id}`, child.token)),
    ).toEqual(forbidden)
  })

  it('refuses an unrelated account: 401 on account and list, 403 on a single wallet', async () => {
    const childBtc = await walletOf(child, 'BTC')
    for (const target of [parent, child]) {
      expect(pick(await h.api('GET', `/api/v2/account/${target.accountId}`, stranger.token))).toEqual(
        unauthorized,
      )
      expect(pick(await h.api('GET', `/api/v2/account/${target.accountId}/wallet/`, stranger.token))).toEqual(
        unauthorized,
      )
    }
    expect(
      pick(await h.api('GET', `/api/v2/account/${child.accountId}/wallet/${childBtc.id}`, stranger.token)),
    ).toEqual(forbidden)
  })

  it('answers an unknown account like an unrelated one, so ids cannot be probed', async () => {
    const unknown = 'acc_' + '0'.repeat(25)
    expect(pick(await h.api('GET', `/api/v2/account/${unknown}`, parent.token))).toEqual(unauthorized)
    expect(pick(await h.api('GET', `/api/v2/account/${unknown}/wallet/`, parent.token))).toEqual(unauthorized)
  })

  it('answers 404 for an unknown wallet and for another account’s wallet under its own account id', async () => {
    const strangerBtc = await walletOf(stranger, 'BTC')
    const unknown = 'wal_' + 'z'.repeat(25)
    expect(
      pick(await h.api('GET', `/api/v2/account/${parent.accountId}/wallet/${unknown}`, parent.token)),
    ).toEqual(notFound)
    expect(
      pick(await h.api('GET', `/api/v2/account/${parent.accountId}/wallet/${strangerBtc.id}`, parent.token)),
    ).toEqual(notFound)
    // A parent may not reach its child's wallet through its own account id either.
    const childBtc = await walletOf(child, 'BTC')
    expect(
      pick(await h.api('GET', `/api/v2/account/${parent.accountId}/wallet/${childBtc.id}`, parent.token)),
    ).toEqual(notFound)
  })

  it('requires a token on every account route', async () => {
    const btc = await walletOf(parent, 'BTC')
    for (const url of [
      `/api/v2/account/${parent.accountId}`,
      `/api/v2/account/${parent.accountId}/wallet/`,
      `/api/v2/account/${parent.accountId}/wallet/${btc.id}`,
    ]) {
      expect(pick(await h.api('GET', url, undefined))).toEqual(unauthorized)
    }
  })

  it('writes balances as exact decimal numbers', async () => {
    const acct = await h.createAccount()
    await h.fund(acct.accountId, 'BTC', '0.5')
    await h.fund(acct.accountId, 'BTC', '0.00000001')
    await h.fund(acct.accountId, 'USD', '0.1')
    await h.fund(acct.accountId, 'USD', '0.2')
    await h.fund(acct.accountId, 'VND', '2470000000')
    await h.fund(acct.accountId, 'USDT', '0.000001')
    const res = await h.app.inject({
      method: 'GET',
      url: `/api/v2/account/${acct.accountId}/wallet/`,
      headers: { authorization: `Bearer ${acct.token}` },
    })
    const raw = res.body
    // The raw text, not a float's rendering of it: no 0.30000000000000004, no 1e-6.
    expect(raw).toContain('"ccy":"BTC","amount":0.50000001,"availableBalance":0.50000001')
    expect(raw).toContain('"ccy":"USD","amount":0.3,"availableBalance":0.3')
    expect(raw).toContain('"ccy":"VND","amount":2470000000,"availableBalance":2470000000')
    expect(raw).toContain('"ccy":"USDT","amount":0.000001,"availableBalance":0.000001')
    expect(raw).not.toMatch(/"(amount|availableBalance)":[^,}]*[eE]/)
    await h.expectBooksBalanced()
  })
})

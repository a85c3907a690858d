import { createHmac, randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness } from '../../test/helpers/harness.js'
import { loadJwtKey } from './jwt-key.js'
import { createAuthService } from './service.js'

// authenticate() remembers tokens whose signature it verified; these pin down that the memory
// never outlives what a fresh verification would accept.
describe('verified-token memory of authenticate()', () => {
  let h: Harness
  beforeAll(async () => {
    h = await createHarness()
  })
  afterAll(async () => h?.close())

  async function serviceWithClock(start: number, tokenTtlS = 60) {
    let clock = start
    const jwtKey = await loadJwtKey(h.c.db, h.c.box, undefined)
    const svc = createAuthService({ db: h.c.db, box: h.c.box, jwtKey, tokenTtlS, now: () => clock })
    return { svc, advance: (ms: number) => (clock += ms) }
  }

  async function issue(svc: ReturnType<typeof createAuthService>, apiKey: string, apiSecret: string) {
    const body = JSON.stringify({ nonce: randomBytes(8).toString('hex') })
    const signature = createHmac('sha256', apiSecret).update(`${apiKey}&payload=${body}`).digest('hex')
    return (await svc.exchange({ apiKey, signature, rawBody: body })).accessToken
  }

  it('refuses a remembered token once it expires, at the same second a fresh check would', async () => {
    const acct = await h.createAccount()
    // Start on a whole second so that the token expires exactly 60 s later.
    const { svc, advance } = await serviceWithClock(1_800_000_000_000, 60)
    const token = await issue(svc, acct.apiKey, acct.apiSecret)
    expect((await svc.authenticate(`Bearer ${token}`)).accountId).toBe(acct.accountId)
    advance(59_999)
    expect((await svc.authenticate(`Bearer ${token}`)).accountId).toBe(acct.accountId)
    advance(1)
    await expect(svc.authenticate(`Bearer ${token}`)).rejects.toMatchObject({
      code: 'unauthorized',
      message: expect.stringMatching(/expired/),
    })
    // A second service, with nothing remembered, draws the line at the same instant.
    const fresh = await serviceWithClock(1_800_000_060_000, 60)
    await expect(fresh.svc.authenticate(`Bearer ${token}`)).rejects.toMatchObject({
      message: expect.stringMatching(/expired/),
    })
  })

  it('still refuses a remembered token whose key was revoked, and a token altered by one character', async () => {
    const acct = await h.createAccount()
    const { svc, advance } = await serviceWithClock(Date.now(), 3600)
    const token = await issue(svc, acct.apiKey, acct.apiSecret)
    expect((await svc.authenticate(`Bearer ${token}`)).accountId).toBe(acct.accountId)
    // The signature's first character: all six of its bits are signature bits. (The last one's low
    // bits are padding, so changing it from A to B, say, leaves the signature as it was.)
    const at = token.lastIndexOf('.') + 1
    const altered = `${token.slice(0, at)}${token[at] === 'A' ? 'B' : 'A'}${token.slice(at + 1)}`
    await expect(svc.authenticate(`Bearer ${altered}`)).rejects.toMatchObject({
      code: 'unauthorized',
      message: 'The access token is invalid',
    })
    expect(await svc.revokeKey(acct.apiKey)).toBe(true)
    advance(1)
    await expect(svc.authenticate(`Bearer ${token}`)).rejects.toMatchObject({ code: 'unauthorized' })
  })
})

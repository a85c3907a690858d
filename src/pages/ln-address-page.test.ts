import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness } from '../../test/helpers/harness.js'
import { decodeLnurl } from '../lightning/address/lnurl-encoding.js'
import { STRINGS } from './i18n.js'
import { scanQrSvg } from '../../test/helpers/qr-scan.js'

/** The hosted page of a Lightning Address, `/pay/ln/{username}`, rendered by the service. */
describe('the hosted page of a Lightning Address', () => {
  let h: Harness
  beforeAll(async () => {
    h = await createHarness({ PUBLIC_BASE_URL: 'https://pay.example.com' })
    const a = await h.createAccount({ name: 'Quán Cà Phê' })
    const r = await h.api('PUT', `/api/v2/account/${a.accountId}/lightning-address`, a.token, {
      username: 'quan-caphe',
      creditCcy: 'BTC',
    })
    expect(r.status).toBe(200)
  })
  afterAll(async () => h?.close())

  const page = (url: string, lang = 'en') =>
    h.app.inject({ method: 'GET', url, headers: { 'accept-language': lang } })
  const qrs = (html: string) => [...html.matchAll(/<svg [\s\S]*?<\/svg>/g)].map((m) => scanQrSvg(m[0]))

  it('shows QR codes of the LNURL (upper case, LUD-01) and of the address, with the page headers', async () => {
    const res = await page('/pay/ln/quan-caphe')
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(res.headers['content-security-policy']).toMatch(/default-src 'none'.*style-src 'self' 'nonce-/)
    expect(res.headers['x-content-type-options']).toBe('nosniff')
    const [lnurl, address] = qrs(res.body)
    expect(lnurl).toMatch(/^LNURL1[0-9A-Z]+$/)
    expect(decodeLnurl(lnurl!)).toBe('https://pay.example.com/.well-known/lnurlp/quan-caphe')
    expect(address).toBe('quan-caphe@pay.example.com')
    expect(res.body).toContain('>quan-caphe@pay.example.com<')
    expect(res.body).toContain(`href="lightning:${lnurl}"`)
    // Nothing about the account behind the address.
    expect(res.body).not.toContain('Quán')
  })

  it('speaks Vietnamese when asked', async () => {
    const res = await page('/pay/ln/quan-caphe', 'vi')
    expect(res.body).toContain('<html lang="vi">')
    expect(res.body).toContain(STRINGS.vi.lnAddressHint)
    expect(res.body).toContain(STRINGS.vi.lnAddressText)
  })

  it('answers an unknown or malformed name with the not-found page', async () => {
    for (const url of ['/pay/ln/nobody', '/pay/ln/No%20Body']) {
      const res = await page(url)
      expect(res.statusCode).toBe(404)
      expect(res.body).toContain(STRINGS.en.notFoundTitle)
      expect(res.body).not.toContain('<svg')
    }
  })
})

/** Issue 29.8: with the default PUBLIC_BASE_URL (http, a port) no address is advertised. */
describe('the hosted page where no Lightning Address is advertised', () => {
  let h: Harness
  beforeAll(async () => {
    h = await createHarness()
    const a = await h.createAccount({ name: 'Quán Cà Phê' })
    const r = await h.api('PUT', `/api/v2/account/${a.accountId}/lightning-address`, a.token, {
      username: 'quan-caphe',
      creditCcy: 'BTC',
    })
    expect(r.status).toBe(200)
  })
  afterAll(async () => h?.close())

  it('shows the LNURL alone: its QR code, its text and the wallet link, and no user@host:port', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/pay/ln/quan-caphe' })
    expect(res.statusCode).toBe(200)
    const svgs = [...res.body.matchAll(/<svg [\s\S]*?<\/svg>/g)].map((m) => scanQrSvg(m[0]))
    expect(svgs).toHaveLength(1)
    expect(decodeLnurl(svgs[0]!)).toBe(`${h.c.config.publicBaseUrl}/.well-known/lnurlp/quan-caphe`)
    expect(res.body).toContain(`href="lightning:${svgs[0]}"`)
    expect(res.body).toContain('data-testid="lnurl-text"')
    expect(res.body).not.toContain('data-testid="address-text"')
    expect(res.body).not.toContain('quan-caphe@')
    expect(res.body).toContain('>quan-caphe<')
  })
})

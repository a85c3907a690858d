import { createHmac } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { chromium, type Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CHROMIUM, HAVE_CHROMIUM } from './console/browser.js'
import { createHarness, type Harness, type TestAccount } from './helpers/harness.js'

/**
 * CORS in a real Chromium: a page served from another origin calls the API with fetch, the token
 * exchange's headers and a bearer token, as a browser app does. The token request is signed here,
 * in the test, standing for the app's backend: a browser never holds the API secret. An origin that
 * is not in CORS_ORIGINS is refused by the browser itself.
 */

const PAGE = '<!doctype html><title>shop</title>'

describe.skipIf(!HAVE_CHROMIUM)('CORS from a browser page on another origin', () => {
  let h: Harness
  let acct: TestAccount
  let api: string
  let listed: Server
  let unlisted: Server
  let browser: Browser

  const serve = async () => {
    const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    return server
  }
  const originOf = (s: Server) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`

  beforeAll(async () => {
    listed = await serve()
    unlisted = await serve()
    h = await createHarness({ CORS_ORIGINS: originOf(listed) })
    acct = await h.createAccount()
    await h.app.listen({ port: 0, host: '127.0.0.1' })
    // The page is at 127.0.0.1, the API at localhost: two origins, as on a real deployment.
    api = `http://localhost:${(h.app.server.address() as AddressInfo).port}`
    browser = await chromium.launch({ executablePath: CHROMIUM })
  }, 60_000)
  afterAll(async () => {
    await browser?.close()
    await h?.close()
    listed?.close()
    unlisted?.close()
  })

  /** The signed token request the app's backend hands the page (it holds the secret, not the page). */
  const signedTokenRequest = () => {
    const body = JSON.stringify({ nonce: Math.random().toString(16).slice(2) })
    const signature = createHmac('sha256', acct.apiSecret)
      .update(`${acct.apiKey}&payload=${body}`)
      .digest('hex')
    return { body, apiKey: acct.apiKey, signature }
  }

  const inPage = async (origin: string) => {
    const page = await browser.newPage()
    await page.goto(origin)
    const result = await page.evaluate(
      async ({ api, signed, accountId }) => {
        try {
          const tokenRes = await fetch(`${api}/api/v2/authentication/token-signature`, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'x-api-key': signed.apiKey,
              'x-api-signature': signed.signature,
            },
            body: signed.body,
          })
          const { accessToken } = await tokenRes.json()
          const res = await fetch(`${api}/api/v2/account/${accountId}/wallet/`, {
            headers: { authorization: `Bearer ${accessToken}` },
          })
          return {
            status: res.status,
            remaining: res.headers.get('x-ratelimit-remaining'),
            body: await res.json(),
          }
        } catch (err) {
          return { error: String(err) }
        }
      },
      { api, signed: signedTokenRequest(), accountId: acct.accountId },
    )
    await page.close()
    return result as { status?: number; remaining?: string | null; body?: any; error?: string }
  }

  it('lets a listed origin get a token and read its wallets', async () => {
    const result = await inPage(originOf(listed))
    expect(result.error).toBeUndefined()
    expect(result.status).toBe(200)
    expect(Array.isArray(result.body.data)).toBe(true)
    // Exposed, so a browser client can wait out a 429 as the SDK does.
    expect(result.remaining).toMatch(/^\d+$/)
  }, 60_000)

  it('is refused by the browser for an origin that is not listed', async () => {
    const result = await inPage(originOf(unlisted))
    expect(result.error).toMatch(/TypeError|Failed to fetch/)
  }, 60_000)
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, ENGINE, type Harness } from '../helpers/harness.js'
import { sessionCookieSecure } from '../../src/operators/routes.js'
import { operatorClient, OPERATOR_PASSWORD } from './operator-client.js'
import { totp } from '../../src/operators/totp.js'

/**
 * Whether the session cookie is Secure follows the configured public URL (PUBLIC_BASE_URL), never
 * the Host header of a request: behind a TLS proxy that forwards `Host: localhost`, or on a
 * service that answers whatever host a client names, the cookie must still be Secure.
 */
describe('the public URL decides whether a session cookie is Secure', () => {
  it('only an http URL of a loopback name goes without Secure', () => {
    expect(sessionCookieSecure('http://localhost:8080')).toBe(false)
    expect(sessionCookieSecure('http://127.0.0.1:8080')).toBe(false)
    expect(sessionCookieSecure('http://[::1]:8080')).toBe(false)
    expect(sessionCookieSecure('http://console.localhost')).toBe(false)
    expect(sessionCookieSecure('https://localhost:8443')).toBe(true)
    expect(sessionCookieSecure('https://pay.example.com')).toBe(true)
    // Plain http elsewhere is no set-up a browser should sign in over: Secure, so it fails closed.
    expect(sessionCookieSecure('http://pay.example.com')).toBe(true)
    expect(sessionCookieSecure('http://localhost.example.com')).toBe(true)
  })
})

describe(`session cookies behind a TLS proxy that forwards Host: localhost (${ENGINE})`, () => {
  let h: Harness
  let client: ReturnType<typeof operatorClient>
  beforeAll(async () => {
    h = await createHarness({ PUBLIC_BASE_URL: 'https://console.example.com' })
    client = operatorClient(h.app, h.adminToken)
  })
  afterAll(() => h?.close())

  it('keeps Secure on the API sign-in, its sign-out, and the console form cookie', async () => {
    const op = await client.createOperator('viewer')
    const session = await client.signIn(op, { host: 'localhost' })
    expect(session.setCookie).toContain('; Secure')
    const out = await client.request('DELETE', '/admin/session', { session, host: 'localhost' })
    expect(out.status).toBe(200)
    expect(String(out.headers['set-cookie'])).toContain('; Secure')

    const form = await h.app.inject({ url: '/admin/console/sign-in', headers: { host: 'localhost' } })
    const formCookie = String(form.headers['set-cookie'])
    expect(formCookie).toContain('; Secure')
    const other = await client.createOperator('viewer')
    const token = /name="form_token" value="([^"]+)"/.exec(form.body)![1]!
    const res = await h.app.inject({
      method: 'POST',
      url: '/admin/console/sign-in',
      headers: {
        host: 'localhost',
        cookie: formCookie.split(';')[0]!,
        'content-type': 'application/x-www-form-urlencoded',
      },
      payload: new URLSearchParams({
        form_token: token,
        email: other.email,
        password: OPERATOR_PASSWORD,
        code: totp(other.secret, Date.now() + 30_000),
      }).toString(),
    })
    expect(res.statusCode).toBe(303)
    const cookies = [res.headers['set-cookie']].flat().map(String)
    expect(cookies.length).toBeGreaterThanOrEqual(2)
    for (const c of cookies) expect(c).toContain('; Secure')
  })
})

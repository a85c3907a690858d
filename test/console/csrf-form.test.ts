import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, ENGINE, type Harness } from '../helpers/harness.js'
import { operatorClient, OPERATOR_PASSWORD } from '../admin/operator-client.js'
import { totp } from '../../src/operators/totp.js'

/**
 * The console's forms carry the CSRF token as a hidden field: the guard accepts it in place of the
 * header, only for urlencoded posts to console routes, compared like the header. A browser without
 * a session is sent to the sign-in page; a script gets the contract's JSON error.
 */
describe(`console forms and CSRF (${ENGINE})`, () => {
  let h: Harness
  let client: ReturnType<typeof operatorClient>

  beforeAll(async () => {
    h = await createHarness()
    client = operatorClient(h.app, h.adminToken)
  })
  afterAll(() => h?.close())

  const post = (url: string, cookie: string, form: Record<string, string>, headers = {}) =>
    h.app.inject({
      method: 'POST',
      url,
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers },
      payload: new URLSearchParams(form).toString(),
    })

  it('accepts the hidden field in place of the header, and refuses a missing or foreign one', async () => {
    const s = await client.signIn(await client.createOperator('viewer'))
    const other = await client.signIn(await client.createOperator('viewer'))
    const top = async () =>
      Number((await h.c.db.query('SELECT max(id) AS id FROM admin_audit')).rows[0].id ?? 0)
    const before = await top()
    const forms: Record<string, string>[] = [{}, { csrf_token: other.csrfToken }, { csrf_token: '' }]
    for (const form of forms) {
      const res = await post('/admin/console/sign-out', s.cookie, form)
      expect(res.statusCode, JSON.stringify(form)).toBe(403)
      expect(JSON.parse(res.body).error).toBe('forbidden')
    }
    // Nothing happened: no audit row, and the session still works.
    expect(await top()).toBe(before)
    expect((await client.request('GET', '/admin/session', { session: s })).status).toBe(200)
    // A form post to an API route (not the console) does not get the field's leniency.
    const api = await post('/admin/sessions/revoke-all', s.cookie, { csrf_token: s.csrfToken })
    expect(api.statusCode).toBe(403)
    const ok = await post('/admin/console/sign-out', s.cookie, { csrf_token: s.csrfToken })
    // Post/Redirect/Get: the sign-out leads to the signed-out page.
    expect(ok.statusCode).toBe(303)
    expect(ok.headers.location).toBe('/admin/console/signed-out')
    expect(String(ok.headers['set-cookie'])).toMatch(/svcpay_admin=;/)
    expect((await client.request('GET', '/admin/session', { session: s })).status).toBe(401)
    const { rows } = await h.c.db.query('SELECT action FROM admin_audit WHERE id > $1', [before])
    expect(rows.map((r) => r.action)).toEqual(['operator.sign_out'])
  })

  it('sends a browser without a session to the sign-in page, and a script a JSON 401', async () => {
    const browser = await h.app.inject({
      url: '/admin/console?lang=vi',
      headers: { accept: 'text/html,application/xhtml+xml' },
    })
    expect(browser.statusCode).toBe(303)
    expect(browser.headers.location).toBe('/admin/console/sign-in?next=%2Fadmin%2Fconsole%3Flang%3Dvi')
    const script = await h.app.inject({ url: '/admin/console' })
    expect(script.statusCode).toBe(401)
    expect(JSON.parse(script.body).error).toBe('unauthorized')
    // An address outside the console is not a place to go back to after signing in.
    const page = await h.app.inject({ url: '/admin/console/sign-in?next=//evil.example/x' })
    expect(page.body).toContain('action="/admin/console/sign-in"')
  })

  it('after signing in, goes back only to a normalised path inside the console', async () => {
    const op = await client.createOperator('viewer')
    const next = encodeURIComponent('/admin/console/%2e%2e/%2e%2e/pay/x')
    const form = await h.app.inject({ url: `/admin/console/sign-in?next=${next}` })
    expect(form.body).toContain('action="/admin/console/sign-in"')
    const cookie = String(form.headers['set-cookie']).split(';')[0]!
    const token = /name="form_token" value="([^"]+)"/.exec(form.body)![1]!
    const res = await post(`/admin/console/sign-in?next=${next}`, cookie, {
      form_token: token,
      email: op.email,
      password: OPERATOR_PASSWORD,
      code: totp(op.secret, Date.now() + 30_000),
    })
    expect(res.statusCode).toBe(303)
    expect(res.headers.location).toBe('/admin/console')
  })
})

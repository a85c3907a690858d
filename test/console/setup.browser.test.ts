import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ENGINE } from '../helpers/harness.js'
import { OPERATOR_PASSWORD } from '../admin/operator-client.js'
import { fromBase32, totp } from '../../src/operators/totp.js'
import { axeViolations, HAVE_CHROMIUM, startConsoleRig, type ConsoleRig } from './browser.js'

/**
 * An operator's own set-up in the console (src/console/setup.ts) instead of two calls to the API:
 * the set-up secret an admin handed over, the authenticator's secret shown once (a reload never
 * issues another), a password and a code; then the operator signs in. The secret works once, and
 * the forms refuse a post that does not come from them.
 */
describe.skipIf(!HAVE_CHROMIUM)(`the operator set-up page in Chromium (${ENGINE})`, () => {
  let rig: ConsoleRig

  beforeAll(async () => {
    rig = await startConsoleRig()
  })
  afterAll(async () => rig?.close())

  const audit = async (action: string) =>
    Number(
      (await rig.h.c.db.query('SELECT count(*) AS n FROM admin_audit WHERE action = $1', [action])).rows[0].n,
    )

  it('sets up a new operator from its set-up secret, once, and lets it sign in', async () => {
    const email = `newcomer-${Date.now()}@example.com`
    const created = await rig.client.asSystem('POST', '/admin/operators', { email, role: 'viewer' })
    const setupSecret = created.setupSecret as string
    const context = await rig.browser.newContext()
    const page = await context.newPage()
    const problems: string[] = []
    page.on('pageerror', (e) => problems.push(e.message))

    await page.goto(`${rig.origin}/admin/console/setup`)
    expect(await axeViolations(page)).toEqual([])
    await page.fill('#setup-secret', setupSecret)
    const [posted] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Continue' }).click(),
    ])
    expect(posted.status()).toBe(303)
    await page.waitForSelector('[data-testid=totp]')
    expect(page.url()).toMatch(/\/admin\/console\/setup\/enrol\/[A-Za-z0-9_-]{24}$/)
    expect(await axeViolations(page)).toEqual([])
    const first = (await page.locator('[data-testid=totp] dd').first().textContent())!
    const stored = async () =>
      (await rig.h.c.db.query('SELECT totp_secret_enc FROM operators WHERE id = $1', [created.operator.id]))
        .rows[0].totp_secret_enc
    const enrolled = await stored()

    // A reload issues no new authenticator secret and shows none: the page was shown once.
    const reloaded = await page.reload()
    expect(reloaded!.status()).toBe(410)
    expect(await page.locator('main').textContent()).not.toContain(first)
    expect(await stored()).toBe(enrolled)
    expect(await audit('operator.setup_begin')).toBe(1)

    // Starting again gives a new secret; that one is enrolled.
    await page.getByRole('link', { name: 'Start again' }).click()
    await page.fill('#setup-secret', setupSecret)
    await page.getByRole('button', { name: 'Continue' }).click()
    await page.waitForSelector('[data-testid=totp]')
    const secret = fromBase32((await page.locator('[data-testid=totp] dd').first().textContent())!)
    await page.fill('#new-password', OPERATOR_PASSWORD)
    await page.fill('#new-password-again', `${OPERATOR_PASSWORD} typo`)
    await page.fill('#code', totp(secret, Date.now()))
    await page.getByRole('button', { name: 'Finish set-up' }).click()
    expect(await page.getByRole('alert').textContent()).toBe('The two passwords are not the same.')
    await page.fill('#new-password', OPERATOR_PASSWORD)
    await page.fill('#new-password-again', OPERATOR_PASSWORD)
    await page.fill('#code', totp(secret, Date.now() - 30_000))
    await Promise.all([
      page.waitForURL(`${rig.origin}/admin/console/setup/done`),
      page.getByRole('button', { name: 'Finish set-up' }).click(),
    ])
    expect(await page.getByRole('status').textContent()).toContain('Your account is ready.')
    expect(await axeViolations(page)).toEqual([])
    expect(await audit('operator.setup')).toBe(1)

    // The set-up secret is used up: the page is no use any more.
    await page.goto(`${rig.origin}/admin/console/setup?lang=vi`)
    expect(await page.locator('h1').textContent()).toBe('Thiết lập tài khoản người vận hành')
    await page.fill('#setup-secret', setupSecret)
    await page.getByRole('button', { name: 'Tiếp tục' }).click()
    expect(await page.getByRole('alert').textContent()).toBe(
      'Mã thiết lập không tồn tại, đã dùng hoặc đã hết hạn. Hãy xin quản trị viên một mã mới.',
    )
    expect(await audit('operator.setup_begin')).toBe(2)

    // And the operator signs in with the password and the enrolled authenticator.
    const signedIn = await rig.signIn({ id: created.operator.id, email, role: 'viewer', secret })
    expect(signedIn.page.url()).toBe(`${rig.origin}/admin/console`)
    expect(problems).toEqual([])
  })

  it('refuses a set-up form posted from elsewhere (no matching form cookie)', async () => {
    const created = await rig.client.asSystem('POST', '/admin/operators', {
      email: `forged-${Date.now()}@example.com`,
      role: 'viewer',
    })
    const before = await audit('operator.setup_begin')
    for (const url of ['/admin/console/setup', '/admin/console/setup/finish']) {
      const res = await rig.h.app.inject({
        method: 'POST',
        url,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'text/html',
          cookie: 'svcpay_console_setup=abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG',
        },
        payload: new URLSearchParams({
          form_token: 'another-value-entirely-0123456789abcdefghijk',
          setupSecret: created.setupSecret,
          password: OPERATOR_PASSWORD,
          passwordAgain: OPERATOR_PASSWORD,
          code: '000000',
        }).toString(),
      })
      expect(res.statusCode, url).toBe(403)
      expect(res.body, url).toContain('This form has expired.')
    }
    expect(await audit('operator.setup_begin')).toBe(before)
    const { rows } = await rig.h.c.db.query('SELECT status, totp_secret_enc FROM operators WHERE id = $1', [
      created.operator.id,
    ])
    expect(rows[0]).toMatchObject({ status: 'pending', totp_secret_enc: null })
  })
})

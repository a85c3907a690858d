import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ENGINE } from '../helpers/harness.js'
import {
  axeViolations,
  HAVE_CHROMIUM,
  nextCode,
  startConsoleRig,
  tabThrough,
  type ConsoleRig,
} from './browser.js'
import { OPERATOR_PASSWORD } from '../admin/operator-client.js'

/**
 * The console's shell in Chromium: sign-in with password and a TOTP code computed from the secret,
 * the navigation by role, keyboard use, accessibility, sign-out and sign-out everywhere.
 */
describe.skipIf(!HAVE_CHROMIUM)(`the console shell in Chromium (${ENGINE})`, () => {
  let rig: ConsoleRig

  beforeAll(async () => {
    rig = await startConsoleRig()
  })
  afterAll(() => rig?.close())

  it('signs in with password and TOTP, passes axe, works by keyboard, and signs out', async () => {
    const op = await rig.createOperator('support')
    const { context, page, problems } = await rig.signIn(op)
    const csp = (await page.request.get(`${rig.origin}/admin/console`)).headers()['content-security-policy']
    expect(csp).toMatch(/script-src 'nonce-[^']+'/)
    expect(csp).toContain("form-action 'self'")
    const cookies = await context.cookies()
    const session = cookies.find((c) => c.name === 'svcpay_admin')!
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict' })
    expect(await page.locator('h1').textContent()).toBe('Overview')
    // Support may not read the audit trail: no Audit or Operators entry.
    const nav = await page.locator('nav a').allTextContents()
    expect(nav).toContain('Overview')
    expect(nav).not.toContain('Audit')
    expect(nav).not.toContain('Operators')
    expect(await axeViolations(page)).toEqual([])

    // Keyboard: the first Tab reaches the skip link, then the navigation, each with a focus ring.
    const focus = await tabThrough(page, 3)
    expect(focus[0]).toMatchObject({ tag: 'a', text: 'Skip to content' })
    expect(focus[1]).toMatchObject({ tag: 'a', text: 'Overview' })
    for (const f of focus) expect(f.outline, JSON.stringify(f)).toBeGreaterThanOrEqual(2)
    await page.keyboard.press('Shift+Tab')
    await page.keyboard.press('Shift+Tab')
    await page.keyboard.press('Enter')
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('main')

    // Every form carries the session's CSRF token.
    const tokens = await page
      .locator('form input[name=csrf_token]')
      .evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value))
    expect(tokens.length).toBeGreaterThanOrEqual(2)
    expect(new Set(tokens).size).toBe(1)

    await page.getByRole('button', { name: 'Sign out', exact: true }).click()
    await page.waitForSelector('text=You are signed out of this browser.')
    await page.goto(`${rig.origin}/admin/console`)
    expect(page.url()).toContain('/admin/console/sign-in?next=')
    expect(problems).toEqual([])
    await context.close()
  })

  // One operator signs in twice, each time with a code of a step not used before (a used step is
  // refused as a replay) and at most one step ahead of the clock: when its set-up had to use the
  // current step, the second sign-in waits for the clock to reach the next one, up to 30 s. The
  // test's time allows for that wait; what it asserts does not change.
  it(
    'refuses a wrong code, keeps the form accessible in Vietnamese, and signs out everywhere',
    { timeout: 75_000 },
    async () => {
      const op = await rig.createOperator('compliance')
      const context = await rig.browser.newContext({ extraHTTPHeaders: { 'Accept-Language': 'vi' } })
      const page = await context.newPage()
      await page.goto(`${rig.origin}/admin/console/sign-in`)
      expect(await page.locator('h1').textContent()).toBe('Đăng nhập')
      await page.fill('#email', op.email)
      await page.fill('#password', OPERATOR_PASSWORD)
      await page.fill('#code', '000000')
      await page.click('button[type=submit]')
      await page.waitForSelector('[role=alert]')
      expect(await axeViolations(page)).toEqual([])
      const focus = await tabThrough(page, 5)
      expect(focus.map((f) => f.tag)).toEqual(['a', 'input', 'input', 'input', 'button'])

      // A second browser of the same operator; "sign out everywhere" ends both.
      const first = await rig.signIn(op, { locale: 'vi' })
      await page.fill('#email', op.email)
      await page.fill('#password', OPERATOR_PASSWORD)
      await page.fill('#code', await nextCode(op))
      await Promise.all([page.waitForURL(`${rig.origin}/admin/console`), page.click('button[type=submit]')])
      const nav = await page.locator('nav a').allTextContents()
      expect(nav).toContain('Tổng quan')
      await page.getByRole('button', { name: 'Đăng xuất khỏi mọi nơi' }).click()
      await page.waitForSelector('text=Mọi phiên của bạn đã kết thúc')
      await first.page.reload()
      expect(first.page.url()).toContain('/admin/console/sign-in')
      await first.context.close()
      await context.close()
    },
  )

  it('refuses a sign-in form posted from elsewhere (no matching form cookie)', async () => {
    const res = await fetch(`${rig.origin}/admin/console/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
      body: 'form_token=abc&email=a%40example.com&password=x&code=123456',
    })
    expect(res.status).toBe(403)
    expect(res.headers.get('set-cookie')).not.toMatch(/svcpay_admin=[^;]/)
  })
})

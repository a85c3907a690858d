import { readFileSync } from 'node:fs'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ENGINE } from '../helpers/harness.js'
import { seedExportRows } from '../helpers/export-seed.js'
import {
  axeViolations,
  HAVE_CHROMIUM,
  startConsoleRig,
  type ConsoleRig,
  type SignedInPage,
} from './browser.js'

/**
 * The console's audit log, operators, reconciliation and exports pages in Chromium: an admin
 * creates an operator and sees its set-up secret once, changes its role, disables and enables it,
 * resets another; finds those actions in the audit log and downloads them as CSV; runs a
 * reconciliation; downloads an export. Every page passes axe-core. One browser for the file.
 */
describe.skipIf(!HAVE_CHROMIUM)(`the console's admin pages in Chromium (${ENGINE})`, () => {
  let rig: ConsoleRig
  let admin: SignedInPage
  let page: Page
  const newEmail = `new-${Date.now()}@example.com`

  const auditRows = async (action: string) =>
    (
      await rig.h.c.db.query(
        'SELECT operator_email, action, target, before, after FROM admin_audit WHERE action = $1 ORDER BY id',
        [action],
      )
    ).rows
  const expectAccessible = async () => expect(await axeViolations(page), page.url()).toEqual([])
  const row = (email: string) => page.locator(`tr[data-operator="${email}"]`)

  beforeAll(async () => {
    rig = await startConsoleRig()
    await seedExportRows(rig.h.c.db, {
      accountId: 'acc_browserexport',
      n: 1_500,
      baseMs: Date.UTC(2026, 0, 1),
    })
    admin = await rig.signIn(await rig.createOperator('admin'))
    page = admin.page
  })
  afterAll(async () => {
    expect(admin?.problems ?? []).toEqual([])
    await rig?.close()
  })

  it('creates an operator, showing its set-up secret once, then changes its role, disables and enables it', async () => {
    await page.goto(`${rig.origin}/admin/console/operators`)
    await expectAccessible()
    await page.fill('#new-email', newEmail)
    await page.selectOption('#new-role', 'support')
    await page.getByRole('button', { name: 'Create', exact: true }).click()
    await page.waitForSelector('[data-testid=setup-secret]')
    const [secret] = await page.locator('[data-testid=setup-secret] dd').allTextContents()
    expect(secret).toMatch(/^setup_[A-Za-z0-9_-]{43}$/)
    await expectAccessible()
    expect(JSON.stringify(await auditRows('operator.create'))).not.toContain(secret!.slice(6))
    // The secret works for the set-up, and is not on the list page.
    const begun = await rig.client.request('POST', '/admin/setup/begin', { body: { setupSecret: secret } })
    expect(begun.status).toBe(200)
    await page.goto(`${rig.origin}/admin/console/operators`)
    expect(await page.content()).not.toContain(secret!)
    expect(await row(newEmail).textContent()).toContain('set-up pending')

    await row(newEmail).locator('select').selectOption('finance')
    await row(newEmail)
      .getByRole('button', { name: `Set role: ${newEmail}` })
      .click()
    await page.waitForSelector(`text=${newEmail} is now finance.`)
    await page.goto(`${rig.origin}/admin/console/operators`)
    await row(newEmail)
      .getByRole('button', { name: `Disable: ${newEmail}` })
      .click()
    await page.waitForSelector('text=is disabled; its sessions have ended')
    await page.goto(`${rig.origin}/admin/console/operators`)
    expect(await row(newEmail).textContent()).toContain('disabled')
    await row(newEmail)
      .getByRole('button', { name: `Enable: ${newEmail}` })
      .click()
    // It never finished its set-up: it comes back pending.
    await page.waitForSelector(`text=${newEmail} is enabled (set-up pending).`)
    expect((await auditRows('operator.role')).at(-1)).toMatchObject({
      before: { role: 'support' },
      after: { role: 'finance' },
      operator_email: expect.stringMatching(/^admin-/),
    })
    expect((await auditRows('operator.disable')).length).toBe(1)
    expect((await auditRows('operator.enable')).length).toBe(1)
  })

  it('resets an active operator: its session ends and a new set-up secret is shown once', async () => {
    const viewer = await rig.createOperator('viewer')
    const session = await rig.client.signIn(viewer, { atMs: Date.now() + 30_000 })
    await page.goto(`${rig.origin}/admin/console/operators`)
    await row(viewer.email)
      .getByRole('button', { name: `Reset password and second factor: ${viewer.email}` })
      .click()
    await page.waitForSelector('[data-testid=setup-secret]')
    expect(await page.locator('[data-testid=setup-secret] dd').first().textContent()).toMatch(/^setup_/)
    await expectAccessible()
    expect((await rig.client.request('GET', '/admin/session', { session })).status).toBe(401)
  })

  it('shows the audit log with filters, pages it, and links the same rows as CSV', async () => {
    await page.goto(`${rig.origin}/admin/console/audit`)
    await expectAccessible()
    await page.fill('#f-action', 'operator.role')
    await page.getByRole('button', { name: 'Apply' }).click()
    await page.waitForURL(/action=operator\.role/)
    const rows = page.locator('[data-testid=audit] tbody tr')
    expect(await rows.count()).toBe(1)
    expect(await rows.first().textContent()).toContain('{"role":"support"} → {"role":"finance"}')
    await expectAccessible()
    const href = await page.getByTestId('audit-csv').getAttribute('href')
    expect(href).toContain('action=operator.role')
    const csv = await page.request.get(`${rig.origin}${href}`)
    expect(csv.status()).toBe(200)
    const lines = (await csv.text()).split('\r\n').filter(Boolean)
    expect(lines).toHaveLength(2)
    expect(lines[1]).toContain(',operator.role,')
    // An exact target that matches nothing says so.
    await page.goto(`${rig.origin}/admin/console/audit?target=${encodeURIComponent('operator:')}`)
    expect(await page.locator('main [role=status]').textContent()).toContain('No audit row matches.')

    // Seventy rows of one action: fifty on the first page, the twenty older ones behind the link.
    await rig.h.c.db.query(
      `INSERT INTO admin_audit (at, operator_id, operator_email, action, target)
       SELECT $1::bigint + g, 'opr_x', 'x@example.com', 'test.page', 'n=' || g FROM generate_series(1, 70) AS g`,
      [Date.now()],
    )
    await page.goto(`${rig.origin}/admin/console/audit?action=test.page`)
    expect(await rows.count()).toBe(50)
    expect(await rows.first().textContent()).toContain('n=70')
    await page.getByRole('link', { name: 'Older rows' }).click()
    await page.waitForURL(/cursor=/)
    expect(await rows.count()).toBe(20)
    expect(await rows.last().textContent()).toContain('n=1')
    expect(await page.getByRole('link', { name: 'Older rows' }).count()).toBe(0)
    await expectAccessible()
  })

  it('runs a reconciliation and shows the report', async () => {
    await page.goto(`${rig.origin}/admin/console/reconciliation`)
    await expectAccessible()
    await page.getByRole('button', { name: 'Run now' }).click()
    await page.waitForSelector('[data-testid=reconciliation-rails]')
    expect(await page.locator('[data-testid=reconciliation-rails] tbody tr').count()).toBeGreaterThan(0)
    expect(await page.getByTestId('reconciliation-currencies').textContent()).toContain('BTC')
    expect(await page.getByTestId('reconciliation-summary').textContent()).toMatch(/^Checked at \d{4}-/)
    await expectAccessible()
    const runs = await auditRows('reconciliation.run')
    expect(runs).toHaveLength(1)
    expect(runs[0].after.rails.length).toBeGreaterThan(0)
  })

  it('downloads an export from the exports form, audited', async () => {
    await page.goto(`${rig.origin}/admin/console/exports`)
    await expectAccessible()
    const form = page.getByTestId('export-transactions')
    await form.locator('input[name=from]').fill('2026-01-01')
    await form.locator('input[name=to]').fill('2026-01-02')
    await form.locator('input[name=accountId]').fill('acc_browserexport')
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      form.getByRole('button', { name: 'Download CSV' }).click(),
    ])
    expect(download.suggestedFilename()).toBe(
      'svcpay-transactions-acc_browserexport-2026-01-01-2026-01-02.csv',
    )
    const lines = readFileSync((await download.path())!, 'utf8')
      .split('\r\n')
      .filter(Boolean)
    expect(lines).toHaveLength(1 + 1_500)
    expect(lines[1]).toContain('txn_exp00000000000000000001,2026-01-01T00:00:01.000Z')
    expect((await auditRows('export.transactions')).at(-1)).toMatchObject({
      target: 'accountId=acc_browserexport',
      operator_email: expect.stringMatching(/^admin-/),
    })
  })

  it('keeps the operators page from anyone but an admin, and shows each role only its pages', async () => {
    const viewer = await rig.signIn(await rig.createOperator('viewer'))
    try {
      const nav = await viewer.page.locator('nav').first().textContent()
      expect(nav).not.toContain('Operators')
      expect(nav).not.toContain('Audit')
      expect(nav).not.toContain('Exports')
      expect(nav).toContain('Reconciliation')
      const res = await viewer.page.goto(`${rig.origin}/admin/console/operators`)
      expect(res!.status()).toBe(403)
      expect(viewer.problems).toEqual([])
    } finally {
      await viewer.context.close()
    }
    const adminNav = await page.locator('nav').first().textContent()
    for (const label of ['Operators', 'Audit', 'Exports', 'Reconciliation']) expect(adminNav).toContain(label)
  })
})

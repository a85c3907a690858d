import { deliveryDepsOf, startReceiver, type Receiver } from '../helpers/webhooks.js'
import { runDueDeliveries } from '../../src/events/delivery-worker.js'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestAccount } from '../helpers/harness.js'
import { ENGINE } from '../helpers/harness.js'
import {
  axeViolations,
  HAVE_CHROMIUM,
  startConsoleRig,
  tabThrough,
  type ConsoleRig,
  type SignedInPage,
} from './browser.js'

/**
 * The console's pages in Chromium against the running service: an operator signs in with password
 * and TOTP, finds an account, manages its keys, opens a transaction, sees its timeline, entries and
 * deliveries and redelivers one; every change shows up in the audit trail, and every page passes
 * axe-core and works by keyboard. One browser and one signed-in page for the whole file.
 */
describe.skipIf(!HAVE_CHROMIUM)(`the console's pages in Chromium (${ENGINE})`, () => {
  let rig: ConsoleRig
  let support: SignedInPage
  let shop: TestAccount
  let txnId: string
  let page: Page
  let receiver: Receiver

  const auditRows = async (action: string) =>
    (
      await rig.h.c.db.query(
        'SELECT operator_email, action, target, before, after FROM admin_audit WHERE action = $1 ORDER BY id',
        [action],
      )
    ).rows

  const expectAccessible = async () => {
    expect(await axeViolations(page), page.url()).toEqual([])
  }

  beforeAll(async () => {
    rig = await startConsoleRig()
    shop = await rig.h.createAccount({ name: 'Cà phê Sài Gòn' })
    await rig.h.createAccount({ name: 'Sub shop', parentId: shop.accountId })
    await rig.h.fund(shop.accountId, 'BTC', '0.01')
    // The shop's webhook receiver refuses everything: its deliveries fail and have attempts to show.
    receiver = await startReceiver('shop-webhook-secret-0123')
    receiver.respond = () => 500
    const hook = await rig.h.api('POST', '/api/v2/webhook', shop.token, {
      callback: receiver.url,
      secret: 'shop-webhook-secret-0123',
    })
    expect(hook.status).toBe(200)
    const swap = {
      extRefId: 'order-4242',
      sourceReq: { ccy: 'BTC', method: 'svcpay', amtRequested: '0.0001', reqDetails: {} },
      destReq: { ccy: 'USD', method: 'svcpay', reqDetails: {} },
    }
    const quoted = await rig.h.api('POST', '/api/v2/transaction', shop.token, swap)
    expect(quoted.status).toBe(200)
    txnId = quoted.body.txnId
    expect((await rig.h.api('PUT', `/api/v2/transaction/${txnId}/confirm`, shop.token)).status).toBe(200)
    // One attempt each, and no retry: the delivery worker marks them failed.
    await runDueDeliveries(deliveryDepsOf(rig.h.c, { retryDelayMs: () => null }))
    support = await rig.signIn(await rig.createOperator('support'))
    page = support.page
  })
  afterAll(async () => {
    expect(support?.problems ?? []).toEqual([])
    await receiver?.close()
    await rig?.close()
  })

  it('shows the overview with the volume chart and its table', async () => {
    await page.goto(`${rig.origin}/admin/console`)
    expect(await page.locator('svg.chart[role=img]').count()).toBeGreaterThanOrEqual(1)
    expect(await page.locator('figure table').first().textContent()).toContain('0.0001 BTC')
    expect(await page.getByTestId('books').getAttribute('class')).toContain('good')
    // The shop's failed delivery needs attention; nothing is stuck.
    expect(await page.getByTestId('attention-failed-deliveries').textContent()).toContain(txnId)
    expect(await page.getByTestId('attention-stuck').textContent()).toBe('No transaction is stuck.')
    await expectAccessible()
  })

  it('finds an account by name, extRefId and key prefix, by keyboard', async () => {
    await page.goto(`${rig.origin}/admin/console/accounts`)
    await expectAccessible()
    const focus = await tabThrough(page, 20)
    const input = focus.findIndex((f) => f.tag === 'input')
    expect(input).toBeGreaterThan(0)
    // Back to the top, and by keyboard alone onto the search field.
    await page.goto(`${rig.origin}/admin/console/accounts`)
    expect((await tabThrough(page, input + 1)).at(-1)?.tag).toBe('input')
    await page.keyboard.type('sài gòn')
    await page.keyboard.press('Enter')
    await page.waitForSelector('[data-testid=accounts]')
    expect(await page.getByTestId('accounts').textContent()).toContain(shop.accountId)
    await expectAccessible()
    for (const q of ['order-4242', shop.apiKey.slice(0, 10), shop.accountId]) {
      await page.goto(`${rig.origin}/admin/console/accounts?q=${encodeURIComponent(q)}`)
      const ids = await page.locator('[data-testid=accounts] tbody tr td:first-child').allTextContents()
      expect(ids, q).toContain(shop.accountId)
    }
    await page.goto(`${rig.origin}/admin/console/accounts?q=${encodeURIComponent('%_%')}`)
    expect(await page.getByTestId('no-accounts').count()).toBe(1)
  })

  it("shows an account's wallets, sub-accounts, keys and transactions; creates and revokes a key", async () => {
    await page.goto(`${rig.origin}/admin/console/accounts/${shop.accountId}`)
    expect(await page.getByTestId('wallets').textContent()).toMatch(/BTC/)
    expect(await page.locator('text=Sub shop').count()).toBe(1)
    expect(await page.getByTestId('keys').textContent()).toContain(shop.apiKey)
    expect(await page.getByTestId('transactions').textContent()).toContain(txnId)
    // Support may not change the tier: no form for it.
    expect(await page.locator('#tier').count()).toBe(0)
    await expectAccessible()

    const keyCount = async () =>
      Number(
        (await rig.h.c.db.query('SELECT count(*) AS n FROM api_keys WHERE account_id = $1', [shop.accountId]))
          .rows[0].n,
      )
    const keysBefore = await keyCount()
    // Post/Redirect/Get: the post answers 303 See Other to a result page, which the browser GETs.
    const [posted] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/keys')),
      page.getByRole('button', { name: 'Create a new API key' }).click(),
    ])
    expect(posted.status()).toBe(303)
    await page.waitForSelector('[data-testid=new-key]')
    expect(page.url()).toMatch(new RegExp(`^${rig.origin}/admin/console/done/[A-Za-z0-9_-]{24}$`))
    const [newKey, newSecret] = await page.locator('[data-testid=new-key] dd').allTextContents()
    expect(newKey).toMatch(/^key_/)
    expect(newSecret!.length).toBeGreaterThan(20)
    expect(await keyCount()).toBe(keysBefore + 1)
    await expectAccessible()
    // The secret is not kept readable: the stored result is sealed.
    const { rows: kept } = await rig.h.c.db.query('SELECT sealed FROM console_flashes')
    expect(JSON.stringify(kept)).not.toContain(newSecret!)
    // A reload neither creates a second key nor shows the secret again.
    const reloaded = await page.reload()
    expect(reloaded!.request().method()).toBe('GET')
    expect(reloaded!.status()).toBe(410)
    expect(await page.locator('main').textContent()).not.toContain(newSecret!)
    expect(await page.locator('main').textContent()).toContain('Nothing was done again')
    expect(await keyCount()).toBe(keysBefore + 1)
    await expectAccessible()
    const created = await auditRows('key.create')
    expect(created.at(-1)).toMatchObject({ operator_email: expect.stringMatching(/^support-/) })
    expect(JSON.stringify(created.at(-1))).not.toContain(newSecret!)

    await page.goto(`${rig.origin}/admin/console/accounts/${shop.accountId}`)
    await page.getByRole('button', { name: `Revoke key ${newKey}` }).click()
    await page.waitForSelector('text=is revoked')
    const revoked = await auditRows('key.revoke')
    expect(revoked.at(-1)).toMatchObject({ target: `apiKey=${newKey}`, after: { revoked: true } })
    // The key no longer exchanges for a token.
    await expect(rig.h.tokenFor(newKey!, newSecret!)).rejects.toThrow()
  })

  it('lists transactions with the API filters and finds one by reference', async () => {
    await page.goto(`${rig.origin}/admin/console/transactions`)
    await expectAccessible()
    // Each state's checkbox sits right beside its label, on the same line.
    for (const state of ['quoted', 'completed', 'failed']) {
      const box = (await page.locator(`#st-${state}`).boundingBox())!
      const label = (await page.locator(`label[for="st-${state}"]`).boundingBox())!
      const gap = label.x - (box.x + box.width)
      expect(gap, state).toBeGreaterThanOrEqual(0)
      expect(gap, state).toBeLessThanOrEqual(8)
      expect(Math.abs(box.y + box.height / 2 - (label.y + label.height / 2)), state).toBeLessThanOrEqual(4)
      expect(box.width, state).toBeLessThanOrEqual(24)
    }
    expect(await page.getByTestId('transactions').textContent()).toContain(txnId)
    await page.check('#st-failed')
    await page.getByRole('button', { name: 'Search' }).click()
    await page.waitForURL(/txnStatuses=failed/)
    expect(await page.getByTestId('total').textContent()).toBe('0 transactions match.')
    await page.goto(
      `${rig.origin}/admin/console/transactions?txnStatuses=completed&srcMethods=svcpay&time=7d`,
    )
    expect(await page.getByTestId('transactions').textContent()).toContain(txnId)
    // The API's own checks answer a bad filter.
    const bad = await page.goto(`${rig.origin}/admin/console/transactions?time=2w`)
    expect(bad!.status()).toBe(400)
    expect(await page.locator('[role=alert]').textContent()).toContain('query.time')
    await page.goto(`${rig.origin}/admin/console/transactions?q=order-4242`)
    expect(await page.getByTestId('transactions').textContent()).toContain(txnId)
  })

  it("shows a transaction's timeline, entries and deliveries, and redelivers one (audited)", async () => {
    await page.goto(`${rig.origin}/admin/console/transactions/${txnId}`)
    expect(await page.getByTestId('txn-state').textContent()).toBe('completed')
    const timeline = await page.locator('[data-testid=timeline] li strong').allTextContents()
    expect(timeline.at(-1)).toBe('completed')
    // The swap's entry: the shop's BTC wallet pays, the FX account receives the amount swapped.
    const wallet = (await rig.h.c.accounts.wallets(shop.accountId)).find((w) => w.ccy === 'BTC')!
    const postings = await page
      .locator('[data-testid=entries] tbody tr')
      .evaluateAll((trs) =>
        trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent!.trim())),
      )
    expect(postings.find((p) => p[2] === wallet.id)?.[3]).toMatch(/^−0\.0001\d* BTC$/)
    expect(postings.find((p) => p[2] === 'sys:fx:BTC')?.[3]).toBe('0.0001 BTC')
    const deliveries = page.getByTestId('delivery')
    expect(await deliveries.count()).toBeGreaterThanOrEqual(1)
    const first = deliveries.first()
    const deliveryId = (await first.getAttribute('data-delivery-id'))!
    expect(await first.textContent()).toContain('failed')
    expect(await first.locator('table tbody tr').count()).toBe(1)
    expect(await first.locator('table').textContent()).toContain('500')
    await expectAccessible()

    const before = receiver.received.length
    await page.getByRole('button', { name: `Redeliver delivery #${deliveryId}` }).click()
    await page.waitForSelector('text=is queued again')
    await expectAccessible()
    const rows = await auditRows('webhook.redeliver')
    expect(rows.at(-1)).toMatchObject({
      operator_email: expect.stringMatching(/^support-/),
      target: `deliveryId=${deliveryId}`,
      after: { txnId, deliveryId },
    })
    // The audit API shows it too, as compliance reads it.
    const trail = await rig.client.asSystem('GET', '/admin/audit?action=webhook.redeliver')
    expect(trail.data[0]).toMatchObject({ target: `deliveryId=${deliveryId}` })
    // The redelivery is real: the worker sends the event again.
    receiver.respond = () => 200
    await runDueDeliveries(deliveryDepsOf(rig.h.c, { retryDelayMs: () => null }))
    await receiver.waitFor(before + 1)
    await page.goto(`${rig.origin}/admin/console/transactions/${txnId}`)
    expect(await page.locator('[data-testid=delivery]', { hasText: 'succeeded' }).count()).toBe(1)
  })

  it('shows a viewer no buttons, and sends a disabled operator to sign in at once', async () => {
    const op = await rig.createOperator('viewer')
    const viewer = await rig.signIn(op)
    const nav = await viewer.page.locator('nav a').allTextContents()
    // A viewer may read the approvals queue, the reconciliation and the screening hits, but decide
    // nothing in them (screening.test.ts shows the hits' forms only to roles that may decide).
    expect(nav).toEqual(['Overview', 'Accounts', 'Transactions', 'Approvals', 'Reconciliation', 'Screening'])
    await viewer.page.goto(`${rig.origin}/admin/console/accounts/${shop.accountId}`)
    expect(await viewer.page.getByTestId('keys').textContent()).toContain(shop.apiKey)
    expect(await viewer.page.locator('main button').count()).toBe(0)
    await viewer.page.goto(`${rig.origin}/admin/console/transactions/${txnId}`)
    expect(await viewer.page.getByTestId('delivery').count()).toBeGreaterThanOrEqual(1)
    expect(await viewer.page.locator('main button').count()).toBe(0)
    expect(await axeViolations(viewer.page)).toEqual([])

    await rig.client.asSystem('POST', `/admin/operators/${op.id}/disable`, {})
    await viewer.page.reload()
    expect(viewer.page.url()).toContain('/admin/console/sign-in?next=')
    expect(viewer.problems).toEqual([])
    await viewer.context.close()
  })
})

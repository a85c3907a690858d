import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestAccount } from '../helpers/harness.js'
import { ENGINE } from '../helpers/harness.js'
import { runDueTransactions } from '../../src/transactions/worker.js'
import {
  axeViolations,
  HAVE_CHROMIUM,
  startConsoleRig,
  tabThrough,
  type ConsoleRig,
  type SignedInPage,
} from './browser.js'

/**
 * The approvals queue in Chromium (issue 19's "done when"): a payout over the threshold waits in
 * processing; one finance operator reviews it in the console and is not offered the approval (posted
 * anyway, it is refused with a page saying why in full),
 * a second finance operator approves it and the worker sends it; a viewer sees the queue without
 * its forms; the audit trail shows each step; the page passes axe-core and works by keyboard.
 */
describe.skipIf(!HAVE_CHROMIUM)(`the approvals queue in Chromium (${ENGINE})`, () => {
  let rig: ConsoleRig
  let first: SignedInPage
  let second: SignedInPage
  let viewer: SignedInPage
  let payer: TestAccount

  const payout = async (amount: string) => {
    const q = await rig.h.api('POST', '/api/v2/transaction', payer.token, {
      sourceReq: { ccy: 'USDT', method: 'svcpay', reqDetails: {} },
      destReq: {
        ccy: 'USDT',
        method: 'tron',
        amtRequested: amount,
        reqDetails: { address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' },
      },
    })
    const c = await rig.h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, payer.token)
    expect(c.body.txnState).toBe('processing')
    return q.body.txnId as string
  }
  const state = async (txnId: string) =>
    (await rig.h.api('GET', `/api/v2/transaction/${txnId}`, payer.token)).body.txnState
  const row = (p: SignedInPage, txnId: string) => p.page.locator(`tr[data-txn="${txnId}"]`)

  beforeAll(async () => {
    rig = await startConsoleRig({ APPROVAL_THRESHOLD_USDT: '1000', SANDBOX_PAYOUT_DELAY_MS: '0' })
    payer = await rig.h.createAccount({ name: 'Nhà nhập khẩu' })
    await rig.h.fund(payer.accountId, 'USDT', '10000')
    first = await rig.signIn(await rig.createOperator('finance'))
    second = await rig.signIn(await rig.createOperator('finance'))
    viewer = await rig.signIn(await rig.createOperator('viewer'))
  })
  afterAll(async () => {
    for (const p of [first, second, viewer]) expect(p?.problems ?? []).toEqual([])
    await rig?.close()
  })

  it('holds a large payout until a second operator approves it; the reviewer is refused', async () => {
    const txnId = await payout('2500')
    const page = first.page
    await page.goto(`${rig.origin}/admin/console`)
    expect(await page.locator('main').textContent()).toContain(txnId)

    await page.goto(`${rig.origin}/admin/console/approvals`)
    expect(await row(first, txnId).textContent()).toContain('2,500 USDT > 1,000 USDT')
    expect(await axeViolations(page)).toEqual([])
    // Past the skip link and the navigation (one link longer since Screening joined it) to the first form.
    const focus = await tabThrough(page, 15)
    expect(focus.some((f) => f.tag === 'input')).toBe(true)

    await row(first, txnId).getByLabel(`Note for ${txnId}`).fill('beneficiary known')
    await row(first, txnId).getByRole('button', { name: 'Mark reviewed' }).click()
    await page.waitForSelector('text=Another operator must approve it now')
    expect(await axeViolations(page)).toEqual([])

    // The reviewer is not offered the approval, and the page says why.
    await page.goto(`${rig.origin}/admin/console/approvals`)
    expect(await row(first, txnId).getByRole('button', { name: 'Approve' }).count()).toBe(0)
    expect(await row(first, txnId).getByTestId('reviewed-by-you').textContent()).toBe(
      'You reviewed it; another operator must approve it.',
    )
    expect(await row(first, txnId).getByRole('button', { name: 'Reject' }).count()).toBe(1)
    // Posted anyway, the approval is refused with a whole sentence about four eyes, not about the
    // role, in either language.
    const csrf = await row(first, txnId).locator('input[name=csrf_token]').first().inputValue()
    for (const [lang, sentence] of [
      [
        'en',
        'You cannot approve this transaction because you made or reviewed it. Another operator with the right to decide must approve it.',
      ],
      [
        'vi',
        'Bạn không thể phê duyệt giao dịch này vì chính bạn đã tạo hoặc kiểm tra nó. Một người vận hành khác có quyền quyết định phải phê duyệt.',
      ],
    ] as const) {
      const refused = await first.context.request.post(
        `${rig.origin}/admin/console/approvals/${txnId}/approve?lang=${lang}`,
        { form: { csrf_token: csrf }, headers: { accept: 'text/html', origin: rig.origin }, maxRedirects: 0 },
      )
      expect(refused.status()).toBe(403)
      const html = await refused.text()
      expect(html).toContain(`<p class="notice bad" role="alert">${sentence}</p>`)
      expect(html).not.toContain('Your role does not allow this')
      expect(html).not.toContain('Vai trò của bạn không được phép')
    }
    expect(await state(txnId)).toBe('processing')
    // The overview's reason is in the page's language.
    await page.goto(`${rig.origin}/admin/console?lang=vi`)
    const waiting = await page.getByTestId('attention-approvals').textContent()
    expect(waiting).toContain('2.500 USDT > 1.000 USDT; đã kiểm tra, hạn đến ')
    expect(waiting).not.toMatch(/reviewed|until/)

    // A viewer sees the queue, without the forms.
    await viewer.page.goto(`${rig.origin}/admin/console/approvals`)
    expect(await row(viewer, txnId).textContent()).toContain('beneficiary known')
    expect(await row(viewer, txnId).locator('form').count()).toBe(0)
    expect(await axeViolations(viewer.page)).toEqual([])

    await second.page.goto(`${rig.origin}/admin/console/approvals`)
    await row(second, txnId).getByRole('button', { name: 'Approve' }).click()
    await second.page.waitForSelector('text=is approved and goes on to the network')
    expect(await state(txnId)).toBe('srccreated')
    await runDueTransactions({ db: rig.h.c.db, transactions: rig.h.c.transactions, log: console })
    await runDueTransactions({ db: rig.h.c.db, transactions: rig.h.c.transactions, log: console })
    expect(await state(txnId)).toBe('completed')

    await second.page.goto(`${rig.origin}/admin/console/approvals?status=approved`)
    expect(await row(second, txnId).textContent()).toMatch(/finance-\w+@example\.com/)

    const { rows } = await rig.h.c.db.query(
      'SELECT action, operator_email FROM admin_audit WHERE target = $1 ORDER BY id',
      [`txnId=${txnId}`],
    )
    expect(rows.map((r) => r.action)).toEqual(['approval.review', 'approval.approve'])
    expect(rows[0].operator_email).not.toBe(rows[1].operator_email)

    // The audit log page shows both steps, each by its own operator.
    const auditor = await rig.signIn(await rig.createOperator('compliance'))
    await auditor.page.goto(
      `${rig.origin}/admin/console/audit?target=${encodeURIComponent(`txnId=${txnId}`)}`,
    )
    const logged = await auditor.page.locator('[data-testid=audit] tbody tr').allTextContents()
    for (const [i, action] of ['approval.review', 'approval.approve'].entries())
      expect(logged.find((r) => r.includes(action))).toContain(rows[i].operator_email)
    expect(await axeViolations(auditor.page)).toEqual([])
    expect(auditor.problems).toEqual([])
  })

  it('rejects with a reason, releasing the funds', async () => {
    const txnId = await payout('1500')
    const page = second.page
    await page.goto(`${rig.origin}/admin/console/approvals`)
    await row(second, txnId).getByLabel(`Reason to reject ${txnId}`).fill('unknown beneficiary')
    await row(second, txnId).getByRole('button', { name: 'Reject' }).click()
    await page.waitForSelector('text=its funds are released')
    const t = (await rig.h.api('GET', `/api/v2/transaction/${txnId}`, payer.token)).body
    expect([t.txnState, t.msg]).toEqual(['rejected', 'approval_rejected'])
    await page.goto(`${rig.origin}/admin/console/approvals?status=rejected`)
    expect(await row(second, txnId).textContent()).toContain('unknown beneficiary')
    expect(await axeViolations(page)).toEqual([])
    await rig.h.expectBooksBalanced()
  })
})

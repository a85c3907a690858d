import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, ENGINE, type Harness } from '../helpers/harness.js'
import { pointCliAt, runCli } from '../helpers/cli.js'
import { operatorClient } from './operator-client.js'

/**
 * `svcpay approvals list|review|approve|reject` over real HTTP. The command line acts as the
 * operator `system`: it may review, then a named operator approves; it may not approve its own review.
 */
describe(`svcpay approvals (${ENGINE})`, () => {
  let h: Harness
  let restoreCli: () => void
  const cli = async (...args: string[]) => (await runCli(...args)).out

  beforeAll(async () => {
    h = await createHarness({ APPROVAL_THRESHOLD_USDT: '100', SANDBOX_PAYOUT_DELAY_MS: '0' })
    restoreCli = await pointCliAt(h)
  })
  afterAll(async () => {
    restoreCli?.()
    await h.close()
  })

  it('lists the queue, reviews, refuses its own approval, and rejects', async () => {
    const a = await h.createAccount({ name: 'Payer' })
    await h.fund(a.accountId, 'USDT', '1000')
    const payout = async () => {
      const q = await h.api('POST', '/api/v2/transaction', a.token, {
        sourceReq: { ccy: 'USDT', method: 'svcpay', reqDetails: {} },
        destReq: {
          ccy: 'USDT',
          method: 'tron',
          amtRequested: '250.5',
          reqDetails: { address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' },
        },
      })
      const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
      expect(c.body.txnState).toBe('processing')
      return c.body.txnId as string
    }
    const first = await payout()
    const second = await payout()
    const listed = await cli('approvals', 'list')
    expect(listed).toContain(`${first}  tron_payout   waiting   250.5 USDT > 100`)
    expect(listed).toContain(second)
    expect(JSON.parse(await cli('approvals', 'list', '--json'))).toHaveLength(2)

    expect(await cli('approvals', 'review', first, '--note', 'checked')).toMatch(/transaction processing/)
    await expect(cli('approvals', 'approve', first)).rejects.toThrow(/forbidden/)
    const client = operatorClient(h.app, h.adminToken)
    const finance = await client.signIn(await client.createOperator('finance'))
    const approved = await client.request('POST', `/admin/approvals/${first}/approve`, {
      session: finance,
      body: {},
    })
    expect(approved.body).toMatchObject({ status: 'approved', txnState: 'srccreated' })

    await expect(cli('approvals', 'reject', second)).rejects.toThrow(/--reason is required/)
    expect(await cli('approvals', 'reject', second, '--reason', 'unknown payee')).toMatch(
      /approval rejected, transaction rejected/,
    )
    expect(await cli('approvals', 'list')).toBe('(none)')
    expect(await cli('approvals', 'list', '--status', 'approved')).toContain(first)
  })
})

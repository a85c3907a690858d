import { describe, expect, it } from 'vitest'
import { operatorClient, type Session } from '../../test/admin/operator-client.js'
import { ENGINE } from '../../test/helpers/harness.js'
import {
  admin,
  lnSend,
  outsideInvoice,
  sends,
  setUp,
  standInProvider,
  TRON_ADDRESS,
} from '../../test/helpers/screening.js'
import { runDueTransactions } from '../transactions/worker.js'

describe(`screening provider, review (${ENGINE})`, () => {
  it('holds for review when the provider is down (SCREENING_ON_ERROR=review) or a list matches (SCREENING_ON_HIT=review); an approval then pays', async () => {
    const provider = await standInProvider(new Set())
    await provider.close()
    const { h, a, payer } = await setUp({
      SCREENING_URL: provider.url,
      SCREENING_ALLOW_PRIVATE: 'true',
      SCREENING_TIMEOUT_MS: '500',
      SCREENING_ON_ERROR: 'review',
      SCREENING_ON_HIT: 'review',
    })
    try {
      const client = operatorClient(h.app, h.adminToken)
      const ops: Session[] = []
      for (let i = 0; i < 2; i++) ops.push(await client.signIn(await client.createOperator('finance')))
      const q = await h.api('POST', '/api/v2/transaction', a.token, sends.tron())
      expect(q.status, JSON.stringify(q.body)).toBe(200)
      const c = await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
      expect([c.status, c.body.txnState]).toEqual([200, 'processing'])
      expect(JSON.stringify(c.body)).not.toMatch(/screening|provider|list/)
      const act = (who: Session, verb: string) =>
        client.request('POST', `/admin/approvals/${q.body.txnId}/${verb}`, { session: who, body: {} })
      expect((await act(ops[0]!, 'review')).status).toBe(200)
      const approved = await act(ops[1]!, 'approve')
      expect(approved.status, approved.raw).toBe(200)
      await runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: console })
      await runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: console })
      expect((await h.api('GET', `/api/v2/transaction/${q.body.txnId}`, a.token)).body.txnState).toBe(
        'completed',
      )

      // A list hit under review holds too, a Lightning send as any other (it can wait in processing
      // since the limits made it able to), and the customer sees nothing of why.
      const invoice = await outsideInvoice(h, payer)
      await admin(h)('PUT', '/admin/screening/lists/internal', {
        list: `${invoice.payee}\n`,
        type: 'lightning_node',
      })
      const ln = await h.api('POST', '/api/v2/transaction', a.token, lnSend(invoice.paymentRequest))
      expect(ln.status, JSON.stringify(ln.body)).toBe(200)
      const lnHeld = await h.api('PUT', `/api/v2/transaction/${ln.body.txnId}/confirm`, a.token)
      expect([lnHeld.status, lnHeld.body.txnState]).toEqual([200, 'processing'])
      expect(JSON.stringify(lnHeld.body)).not.toMatch(/screening|provider|list/)

      // A TRON payout to a listed address waits, with the list's words for operators only.
      await admin(h)('PUT', '/admin/screening/lists/internal', { list: `${TRON_ADDRESS}\n`, type: 'tron' })
      const listed = await h.api('POST', '/api/v2/transaction', a.token, sends.tron())
      expect(listed.status).toBe(200)
      const held = await h.api('PUT', `/api/v2/transaction/${listed.body.txnId}/confirm`, a.token)
      expect([held.status, held.body.txnState]).toEqual([200, 'processing'])
      const waiting = (await admin(h)('GET', '/admin/approvals?status=waiting')).body.data
      const mine = waiting.find((w: any) => w.txnId === listed.body.txnId)
      expect(mine.reasons.map((r: any) => r.text)).toContain(
        `screening hit: tron ${TRON_ADDRESS} on internal (tron:${TRON_ADDRESS})`,
      )
      const hits = (await admin(h)('GET', `/admin/screening/hits?txnId=${listed.body.txnId}`)).body.data
      expect(hits).toMatchObject([{ stage: 'confirm', outcome: 'held', source: 'internal' }])
    } finally {
      await h.close()
    }
  }, 60_000)
})

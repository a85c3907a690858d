import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { operatorClient } from '../../test/admin/operator-client.js'
import { pointCliAt, runCli } from '../../test/helpers/cli.js'
import { ENGINE, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import {
  admin,
  BANK,
  BTC_ADDRESS,
  lnSend,
  outsideInvoice,
  REFUSAL,
  sends,
  setUp,
  TRON_ADDRESS,
} from '../../test/helpers/screening.js'
import { runDueAddresses } from '../onchain/deposits.js'
import { runDueTransactions } from '../transactions/worker.js'

describe(`screening of destinations and deposits (${ENGINE})`, () => {
  let h: Harness
  let a: TestAccount
  let payer: TestAccount
  let list: string
  beforeAll(async () => {
    ;({ h, a, payer } = await setUp({}))
    const invoice = await outsideInvoice(h, payer)
    list = [
      '# a test list',
      'type,value',
      `bitcoin,${BTC_ADDRESS}`,
      `tron,${TRON_ADDRESS}`,
      `bank,${BANK.institutionCode},${BANK.bankAcctNum}`,
      `lightning_node,${invoice.payee.toUpperCase()}`,
    ].join('\n')
  }, 120_000)
  afterAll(() => h?.close())

  const load = async (text: string) => {
    const r = await admin(h)('PUT', '/admin/screening/lists/ofac-test', { list: text })
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    return r.body
  }
  const clear = () => admin(h)('DELETE', '/admin/screening/lists/ofac-test')
  const hitsOf = async (txnId: string) =>
    (await admin(h)('GET', `/admin/screening/hits?txnId=${txnId}`)).body.data as any[]
  const balances = async () =>
    (await h.api('GET', `/api/v2/account/${a.accountId}/wallet/`, a.token)).body.data.map((w: any) => [
      w.ccy,
      w.amount,
      w.availableBalance,
    ])

  it('refuses a listed destination at quote on every send method, naming no list, and shows the operator the hit', async () => {
    expect(await load(list)).toMatchObject({ source: 'ofac-test', after: 4 })
    const before = await balances()
    const { paymentRequest } = await outsideInvoice(h, payer)
    const bodies = {
      ...Object.fromEntries(Object.entries(sends).map(([m, f]) => [m, f()])),
      lightning: lnSend(paymentRequest),
    }
    for (const [method, body] of Object.entries(bodies)) {
      const q = await h.api('POST', '/api/v2/transaction', a.token, body)
      expect([method, q.status, q.body]).toEqual([method, 403, REFUSAL])
    }
    expect(await balances()).toEqual(before)
    const hits = (await admin(h)('GET', '/admin/screening/hits?unreviewed=true')).body.data as any[]
    const quoteHits = hits.filter((x) => x.stage === 'quote' && x.accountId === a.accountId)
    expect(new Set(quoteHits.map((x) => x.kind))).toEqual(
      new Set(['tron_payout', 'vnd_payout', 'onchain_send', 'ln_send']),
    )
    for (const hit of quoteHits) expect(hit).toMatchObject({ source: 'ofac-test', outcome: 'refused' })
    expect(quoteHits.find((x) => x.kind === 'vnd_payout')).toMatchObject({
      type: 'bank',
      value: '970436:0123456789',
    })
  })

  it('refuses at confirm a destination listed after its quote, on every send method, and the confirm changes nothing', async () => {
    expect((await clear()).status).toBe(200)
    const { paymentRequest } = await outsideInvoice(h, payer)
    const bodies = {
      ...Object.fromEntries(Object.entries(sends).map(([m, f]) => [m, f()])),
      lightning: lnSend(paymentRequest),
    }
    const quoted: Record<string, string> = {}
    for (const [method, body] of Object.entries(bodies)) {
      const q = await h.api('POST', '/api/v2/transaction', a.token, body)
      expect([method, q.status]).toEqual([method, 200])
      quoted[method] = q.body.txnId
    }
    const before = await balances()
    await load(list)
    for (const [method, txnId] of Object.entries(quoted)) {
      const c = await h.api('PUT', `/api/v2/transaction/${txnId}/confirm`, a.token)
      expect([method, c.status, c.body]).toEqual([method, 403, REFUSAL])
      expect((await h.api('GET', `/api/v2/transaction/${txnId}`, a.token)).body.txnState).toBe('quoted')
    }
    expect(await balances()).toEqual(before)
    // The hit of a refused confirm is written outside its rolled-back transaction.
    await h.c.screening.settled()
    for (const [method, txnId] of Object.entries(quoted)) {
      const hits = await hitsOf(txnId)
      expect([method, hits.map((x) => [x.stage, x.outcome, x.source])]).toEqual([
        method,
        [['confirm', 'refused', 'ofac-test']],
      ])
    }
  })

  it('holds a deposit from a listed source until an operator releases it; the customer sees it waiting', async () => {
    await load(list)
    const address = (await h.api('GET', '/api/v2/account/onchain-address', a.token)).body.staticOnchainAddress
    const sent = await h.api('POST', '/sandbox/onchain/send', payer.token, {
      address,
      amount: '0.0002',
      fromAddress: BTC_ADDRESS,
    })
    expect(sent.status).toBe(200)
    const work = async () => {
      await runDueAddresses({ ...h.c.bitcoin, log: console })
      await runDueTransactions({ db: h.c.db, transactions: h.c.transactions, log: console })
    }
    await work()
    expect((await h.api('POST', '/sandbox/onchain/mine', payer.token, { blocks: 3 })).status).toBe(200)
    await work()
    const { rows } = await h.c.db.query<{ id: string }>(
      `SELECT id FROM transactions WHERE account_id = $1 AND kind = 'deposit'`,
      [a.accountId],
    )
    expect(rows).toHaveLength(1)
    const id = rows[0]!.id
    const seen = (await h.api('GET', `/api/v2/transaction/${id}`, a.token)).body
    expect(seen.txnState).toBe('srccreated')
    expect(JSON.stringify(seen)).not.toMatch(/ofac|screening|limit/)
    const [hit] = await hitsOf(id)
    expect(hit).toMatchObject({
      stage: 'deposit',
      outcome: 'held',
      type: 'bitcoin',
      value: BTC_ADDRESS,
      source: 'ofac-test',
    })
    const released = await admin(h)('POST', `/admin/screening/hits/${hit.id}/release`)
    expect(released.status, JSON.stringify(released.body)).toBe(200)
    expect(released.body).toMatchObject({ outcome: 'released', reviewedBy: expect.any(String) })
    await work()
    expect((await h.api('GET', `/api/v2/transaction/${id}`, a.token)).body.txnState).toBe('completed')
    await h.expectBooksBalanced()
  })

  it('records every list load and removal in the audit log, with sizes and not entries', async () => {
    const { rows } = await h.c.db.query<{ action: string; target: string; after: any }>(
      `SELECT action, target, after FROM admin_audit WHERE action LIKE 'screening.%' ORDER BY id`,
    )
    expect(rows.map((r) => r.action)).toEqual([
      'screening.list_load',
      'screening.list_clear',
      'screening.list_load',
      'screening.list_load',
      'screening.deposit_release',
    ])
    expect(rows[0]).toMatchObject({ target: 'screening_list=ofac-test', after: { entries: 4 } })
    expect(JSON.stringify(rows.slice(0, 4))).not.toContain(TRON_ADDRESS)
  })

  it('refuses a list with a line that is no destination, and keeps the list it had', async () => {
    const r = await admin(h)('PUT', '/admin/screening/lists/ofac-test', { list: 'bitcoin,not-an-address' })
    expect(r.status).toBe(400)
    expect((await admin(h)('GET', '/admin/screening/lists')).body.data).toMatchObject([
      { source: 'ofac-test', entries: 4 },
    ])
  })

  it('shows the operator every hit on the console page and the overview, and loads lists from the command line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'screening-'))
    const file = join(dir, 'list.txt')
    writeFileSync(file, `# one address a line\n${TRON_ADDRESS}\n`)
    const restore = await pointCliAt(h)
    try {
      const loaded = await runCli('screening', 'load', 'cli-list', file, '--type', 'tron')
      expect(loaded, loaded.out).toMatchObject({ code: 0, out: 'cli-list: 1 entries (was not loaded)' })
      expect((await runCli('screening', 'lists')).out).toMatch(/cli-list\s+1 /)
      const q = await h.api('POST', '/api/v2/transaction', a.token, sends.tron())
      expect([q.status, q.body]).toEqual([403, REFUSAL])
      const hits = await runCli('screening', 'hits', '--unreviewed')
      expect(hits.out).toMatch(new RegExp(`tron_payout  quote  tron:${TRON_ADDRESS}  (ofac-test|cli-list)`))
      expect((await runCli('screening', 'clear', 'cli-list')).out).toBe('cli-list: removed (1 entries)')
    } finally {
      restore()
      rmSync(dir, { recursive: true, force: true })
    }
    const client = operatorClient(h.app, h.adminToken)
    const viewer = await client.signIn(await client.createOperator('viewer'))
    const page = await client.request('GET', '/admin/console/screening', { session: viewer })
    expect(page.status).toBe(200)
    expect(page.raw).toContain('data-testid="screening-hits"')
    expect(page.raw).toContain(`tron: ${TRON_ADDRESS}`)
    expect(page.raw).toContain('ofac-test')
    // A viewer may look, not decide.
    expect(page.raw).not.toContain('/review"')
    const overview = await client.request('GET', '/admin/console', { session: viewer })
    expect(overview.raw).toContain('Screening hits to review')
    const metrics = await h.app.inject({ method: 'GET', url: '/metrics' })
    expect(metrics.body).toMatch(/svcpay_screening_hits_total\{stage="quote",outcome="refused"\} [1-9]/)
    expect(metrics.body).toMatch(/svcpay_screening_hits_total\{stage="confirm",outcome="refused"\} 4/)
    expect(metrics.body).toMatch(/svcpay_screening_hits_total\{stage="deposit",outcome="held"\} 1/)
  })
})

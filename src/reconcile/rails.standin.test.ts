import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, ENGINE, type Harness, type TestAccount } from '../../test/helpers/harness.js'
import { startBankStandin, type BankStandin } from '../../test/standins/bank.js'
import { tronHexOfKey, TronGridStandIn } from '../../test/standins/trongrid.js'
import { base58Of } from '../../test/standins/trongrid-v1.js'
import { pointCliAt, runCli } from '../../test/helpers/cli.js'
import { verifySignature } from '../events/signature.js'
import { runDueTransactions } from '../transactions/worker.js'
import type { ReconciliationReport } from './reconcile.js'

/**
 * Reconciliation of the TRON and bank rails through their real adapters, against the TronGrid and
 * bank-partner stand-ins, which answer from their own chain and books: a service whose operator
 * funded the hot wallet and the partner float, booked that capital and paid real payouts
 * reconciles to zero; drift made at the stand-ins (a transfer from the hot wallet signed
 * elsewhere, a payout the partner made on someone else's word, a payout paid for another amount)
 * shows in the command, the API, the gauges and the signed alert; the brake pauses TRON sends and
 * resumes them; a node that stalls is unknown and pauses nothing.
 */
const HOT_KEY = sha256(utf8ToBytes('svcpay reconcile stand-in hot wallet'))
const HOT_HEX = tronHexOfKey(HOT_KEY)
const OPERATOR_HEX = '41' + bytesToHex(sha256(utf8ToBytes('operator treasury'))).slice(0, 40)
const STRANGER_HEX = '41' + bytesToHex(sha256(utf8ToBytes('somebody else'))).slice(0, 40)
const RECIPIENT = base58Of('41' + bytesToHex(sha256(utf8ToBytes('payout recipient'))).slice(0, 40))
const USDT = 1_000_000n
const TRX = 1_000_000n
const SECRET = 'alert-secret-reconcile-standins-01'
const BANK_KEY = 'partner-key-reconcile-rails'
const BANK_SIGNING = 'reconcile-rails-signing-secret-0123'
const BANK_NOTIFY = 'reconcile-rails-notify-secret-0123'

describe(`reconciliation of the TRON and bank rails against their stand-ins (${ENGINE})`, () => {
  let h: Harness
  let a: TestAccount
  let node: TronGridStandIn
  let bank: BankStandin
  let alerts: Server
  const received: Array<{ body: string; signature: string }> = []
  let restoreCli: () => void
  let clock = Date.now()

  // Runs that count towards the brake and the alerts (POST); GET /admin/reconciliation only reads.
  const report = async (): Promise<ReconciliationReport> => {
    const r = await h.api('POST', '/admin/reconciliation/run', h.adminToken, {})
    expect(r.status).toBe(200)
    return r.body
  }
  const rail = (r: ReconciliationReport, name: string) => r.rails.find((e) => e.rail === name)!
  const cli = runCli
  const gauge = async (name: string, labels: string) => {
    const text = (await h.app.inject({ method: 'GET', url: '/metrics' })).body
    const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`))
    return line === undefined ? undefined : Number(line.split(' ').pop())
  }
  // The nodes are asked again after their poll interval: each pass of the worker runs a minute later.
  const work = () => {
    clock += 60_000
    return runDueTransactions({
      db: h.c.db,
      transactions: h.c.transactions,
      log: console,
      now: () => clock,
      railOps: h.c.config.railOps,
    })
  }
  const get = async (txnId: string) => (await h.api('GET', `/api/v2/transaction/${txnId}`, a.token)).body
  const tronQuote = () =>
    h.api('POST', '/api/v2/transaction', a.token, {
      sourceReq: { ccy: 'USDT', method: 'svcpay', reqDetails: {} },
      destReq: { ccy: 'USDT', method: 'tron', amtRequested: 100, reqDetails: { address: RECIPIENT } },
    })
  const vndPayout = async (bankAcctNum: string) => {
    const q = await h.api('POST', '/api/v2/transaction', a.token, {
      sourceReq: { ccy: 'VND', method: 'svcpay', reqDetails: {} },
      destReq: {
        ccy: 'VND',
        method: 'vnd-instant',
        amtRequested: 200000,
        reqDetails: { bankAcctNum, institutionCode: '970415' },
        kyc: { type: 'business', details: { legalFullName: 'Công ty TNHH Ví Dụ', countryCode: 'vn' } },
      },
      sourceOfFunds: { purpose: 3, source: 2, relationship: 6 },
    })
    expect(q.status, JSON.stringify(q.body)).toBe(200)
    expect((await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)).status).toBe(200)
    await work()
    const sent = await get(q.body.txnId)
    expect(sent.txnState).toBe('destsent')
    return { txnId: q.body.txnId as string, bankRef: sent.destReq.reqDetails.bankRef as string }
  }

  beforeAll(async () => {
    // The chain: the operator's treasury holds USDT and sends 1000 of it to the hot wallet, which
    // also holds TRX for the energy its transfers burn.
    node = new TronGridStandIn()
    node.produceBlocks(30)
    node.account(OPERATOR_HEX).balance = 500n * TRX
    node.usdt.set(OPERATOR_HEX, 5_000n * USDT)
    node.account(HOT_HEX).balance = 300n * TRX
    node.transferSignedElsewhere(OPERATOR_HEX, HOT_HEX, 1_000n * USDT)
    node.produceBlocks(1)
    node.solidify()
    await node.start()
    // The partner: an account that starts empty, into which the operator pays 50,000,000 đồng.
    bank = await startBankStandin({
      apiKey: BANK_KEY,
      signingSecret: BANK_SIGNING,
      notifySecret: BANK_NOTIFY,
      balance: '0',
    })
    bank.deposit(50_000_000n)
    alerts = createServer((req, res) => {
      let body = ''
      req.on('data', (chunk) => (body += chunk))
      req.on('end', () => {
        received.push({ body, signature: String(req.headers['x-svcpay-signature'] ?? '') })
        res.writeHead(204).end()
      })
    })
    await new Promise<void>((resolve) => alerts.listen(0, '127.0.0.1', resolve))
    h = await createHarness({
      TRON: 'trongrid',
      TRONGRID_URL: node.url,
      TRON_HOT_WALLET_PRIVATE_KEY: bytesToHex(HOT_KEY),
      VND: 'bank-http',
      BANK_PAYOUT_URL: bank.url,
      BANK_PAYOUT_API_KEY: BANK_KEY,
      BANK_PAYOUT_SIGNING_SECRET: BANK_SIGNING,
      BANK_PAYOUT_WEBHOOK_SECRET: BANK_NOTIFY,
      RAILS_CHECK_TIMEOUT_MS: '2000',
      RECONCILE_HALT_SENDS: 'true',
      RECONCILE_HALT_AFTER: '2',
      ALERT_WEBHOOK_URL: `http://127.0.0.1:${(alerts.address() as AddressInfo).port}/alerts`,
      ALERT_WEBHOOK_SECRET: SECRET,
    })
    a = await h.createAccount({ name: 'Reconciled payer' })
    await h.fund(a.accountId, 'USDT', '5000')
    await h.fund(a.accountId, 'VND', '5000000')
    restoreCli = await pointCliAt(h)
  }, 120_000)
  afterAll(async () => {
    restoreCli?.()
    await h?.close()
    await node?.stop()
    await bank?.stop()
    await new Promise((resolve) => alerts?.close(resolve))
  })

  it('reads the hot wallet and the float; until the operator books them, they are an unexplained surplus', async () => {
    const r = await report()
    expect(rail(r, 'tron')).toMatchObject({
      adapter: 'trongrid',
      source: 'reserves',
      ledger: '0',
      reported: '1000',
      incoming: '0',
      delta: '1000',
      status: 'surplus',
      otherBalances: { TRX: '300' },
    })
    expect(rail(r, 'bank')).toMatchObject({ adapter: 'bank-http', reported: '50000000', delta: '50000000' })
    // A transfer into the hot wallet is not one of its payments: nothing to match.
    expect(r.orphans).toEqual([])
    expect(r.unmatched.filter((u) => u.rail === 'tron' || u.rail === 'bank')).toEqual([])
  })

  it('reconciles to zero once the capital is booked and real payouts have run on both rails', async () => {
    const tron = await cli(
      'capital',
      'add',
      '--rail',
      'tron',
      '--amount',
      '1000',
      '--note',
      'hot wallet funded from the treasury',
      '--reference',
      'fund-tron',
    )
    expect(tron.code, tron.out).toBe(0)
    expect(tron.out).toContain('booked: put on tron: 1000 USDT (reference fund-tron)')
    // Run again with the same reference: booked once.
    expect(
      (
        await cli(
          'capital',
          'add',
          '--rail',
          'tron',
          '--amount',
          '1000',
          '--note',
          'x',
          '--reference',
          'fund-tron',
        )
      ).out,
    ).toContain('already booked')
    expect(
      (
        await cli(
          'capital',
          'add',
          '--rail',
          'bank',
          '--amount',
          '50000000',
          '--note',
          'float',
          '--reference',
          'fund-bank',
        )
      ).code,
    ).toBe(0)

    const list = await cli('capital', 'list', '--json')
    expect(JSON.parse(list.out).map((c: any) => [c.reference, c.rail, c.amount])).toEqual([
      ['fund-bank', 'bank', '50000000'],
      ['fund-tron', 'tron', '1000'],
    ])

    // A USDT payout: broadcast, mined, solidified, completed.
    const q = await tronQuote()
    expect(q.status, JSON.stringify(q.body)).toBe(200)
    await h.api('PUT', `/api/v2/transaction/${q.body.txnId}/confirm`, a.token)
    await work()
    expect((await get(q.body.txnId)).txnState).toBe('destsent')
    node.produceBlocks(1)
    node.solidify()
    await work()
    const paid = await get(q.body.txnId)
    expect(paid.txnState).toBe('completed')
    // A VND payout the partner completes.
    const vnd = await vndPayout('0011223344')
    bank.payout(vnd.bankRef).status = 'completed'
    await work()
    expect((await get(vnd.txnId)).txnState).toBe('completed')

    const r = await report()
    expect(rail(r, 'tron')).toMatchObject({
      ledger: '900',
      capital: '1000',
      reported: '900',
      delta: '0',
      status: 'ok',
    })
    expect(rail(r, 'bank')).toMatchObject({
      ledger: '49800000',
      reported: '49800000',
      delta: '0',
      status: 'ok',
    })
    expect([r.ok, r.incomplete, r.orphans]).toEqual([true, false, []])
    expect(r.unmatched.filter((u) => u.rail === 'tron' || u.rail === 'bank')).toEqual([])
    const json = await cli('reconcile', '--json')
    expect(json.code, json.out).toBe(0)
    const human = await cli('reconcile')
    expect(human.out).toContain('Operator capital in LEDGER: tron 1000 USDT, bank 50000000 VND')
    expect(human.out).toContain('Every rail reconciles: no deficit.')
    expect(await gauge('svcpay_reserve_delta', 'rail="tron",ccy="USDT"')).toBe(0)
    expect(await gauge('svcpay_reserve_delta', 'rail="bank",ccy="VND"')).toBe(0)
    expect(await gauge('svcpay_reconciliation_orphans', 'rail="tron"')).toBe(0)
    expect(await gauge('svcpay_reconciliation_orphans', 'rail="bank"')).toBe(0)
    expect(received).toEqual([])
  })

  it('a node that stalls is unknown, never zero, and pauses nothing however often it is read', async () => {
    node.fault('/walletsolidity/triggerconstantcontract', { kind: 'stall' }, 3)
    for (let i = 0; i < 3; i++) {
      const r = await report()
      expect(rail(r, 'tron')).toMatchObject({ status: 'unknown', reported: null, delta: null })
      expect(r.pausedRails ?? []).toEqual([])
    }
    expect(await gauge('svcpay_reserve_delta', 'rail="tron",ccy="USDT"')).toBeNaN()
    expect((await tronQuote()).status).toBe(200)
    const { code } = await cli('reconcile')
    expect(code).toBe(0)
  })

  it('drift at the stand-ins: a transfer from the hot wallet signed elsewhere and a payout made on another word', async () => {
    const txId = node.transferSignedElsewhere(HOT_HEX, STRANGER_HEX, 5n * USDT)
    node.produceBlocks(1)
    node.solidify()
    const elsewhere = bank.payoutMadeElsewhere(300_000n)

    const { code, out } = await cli('reconcile', '--record', '--json')
    expect(code).toBe(1)
    const r = JSON.parse(out) as ReconciliationReport
    expect(rail(r, 'tron')).toMatchObject({ reported: '895', ledger: '900', delta: '-5', status: 'deficit' })
    expect(rail(r, 'bank')).toMatchObject({ delta: '-300000', status: 'deficit' })
    expect(r.orphans).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          rail: 'tron',
          side: 'rail',
          reason: 'not_in_ledger',
          ref: txId,
          amount: '-5',
        }),
        expect.objectContaining({
          rail: 'bank',
          side: 'rail',
          reason: 'not_in_ledger',
          ref: elsewhere.id,
          amount: '-300000',
        }),
      ]),
    )
    expect(r.orphans).toHaveLength(2)
    const human = await cli('reconcile', '--record')
    expect(human.out).toContain('DEFICIT on tron (-5 USDT), bank (-300000 VND)')
    expect(await gauge('svcpay_reserve_delta', 'rail="tron",ccy="USDT"')).toBe(-5_000_000)
    expect(await gauge('svcpay_reserve_delta', 'rail="bank",ccy="VND"')).toBe(-300_000)
    expect(await gauge('svcpay_reconciliation_orphans', 'rail="tron"')).toBe(1)
    expect(await gauge('svcpay_reconciliation_orphans', 'rail="bank"')).toBe(1)

    // Signed alerts, one per finding, sent when it appeared (not again at the next run).
    const events = received.map((x) => {
      expect(verifySignature(x.body, SECRET, x.signature)).toBe(true)
      const body = JSON.parse(x.body)
      return `${body.event} ${body.rail}`
    })
    expect(events.sort()).toEqual([
      'reconciliation.deficit bank',
      'reconciliation.deficit tron',
      'reconciliation.orphans bank',
      'reconciliation.orphans tron',
    ])
  })

  it('the brake pauses TRON payouts after K deficit readings, and resumes them once the deficit is explained', async () => {
    // Two readings so far with the deficit (RECONCILE_HALT_AFTER=2): paused.
    const r = await report()
    expect(r.pausedRails).toEqual(['bank', 'tron'])
    const refused = await tronQuote()
    expect([refused.status, refused.body.error]).toEqual([503, 'sends_paused'])

    // The operator looks into it and books the 5 USDT as capital that left the hot wallet.
    const off = await h.api('POST', '/admin/capital', h.adminToken, {
      rail: 'tron',
      ccy: 'USDT',
      direction: 'out',
      amount: '5',
      note: 'transfer signed outside the service, written off',
      reference: 'write-off-1',
    })
    expect(off.status, JSON.stringify(off.body)).toBe(200)
    const after = await report()
    expect(rail(after, 'tron')).toMatchObject({ delta: '0', status: 'ok', capital: '995' })
    expect(after.pausedRails).toEqual(['bank'])
    expect((await tronQuote()).status).toBe(200)
    expect(received.map((x) => JSON.parse(x.body).event)).toContain('reconciliation.cleared')

    // Likewise the partner's payout: sends by the bank rail resume too.
    await h.api('POST', '/admin/capital', h.adminToken, {
      rail: 'bank',
      ccy: 'VND',
      direction: 'out',
      amount: '300000',
      note: 'payout the partner made on another instruction, claimed back from it',
      reference: 'write-off-2',
    })
    expect((await report()).pausedRails).toEqual([])
  })

  it('a payout the partner paid for another amount than the ledger posted is an amount mismatch', async () => {
    const vnd = await vndPayout('0099887766')
    const p = bank.payout(vnd.bankRef)
    p.amount = '199000'
    p.status = 'completed'
    await work()
    expect((await get(vnd.txnId)).txnState).toBe('completed')
    const r = await report()
    expect(r.orphans.filter((o) => o.reason === 'amount_mismatch')).toEqual([
      expect.objectContaining({
        rail: 'bank',
        side: 'both',
        ref: vnd.bankRef,
        txnId: vnd.txnId,
        railAmount: '-199000',
        ledgerAmount: '-200000',
        amount: '1000',
      }),
    ])
    expect((await cli('reconcile')).out).toContain(
      'bank amounts differ: the rail moved -199000 VND, the ledger posted -200000 VND',
    )
  })

  it('a payout the beneficiary bank sent back nets to zero on both sides: no orphan, no delta', async () => {
    const before = rail(await report(), 'bank')
    const vnd = await vndPayout('0055667788')
    bank.payout(vnd.bankRef).status = 'completed'
    await work()
    expect((await get(vnd.txnId)).txnState).toBe('completed')
    bank.payout(vnd.bankRef).status = 'returned'
    bank.payout(vnd.bankRef).reason = 'beneficiary_account_closed'
    const { body, signature } = bank.notificationFor(vnd.bankRef)
    const told = await h.app.inject({
      method: 'POST',
      url: '/partners/bank/notifications',
      headers: { 'content-type': 'application/json', 'x-partner-signature': signature },
      payload: body,
    })
    expect(told.statusCode).toBe(200)
    await work()
    const { rows } = await h.c.db.query(
      `SELECT state FROM transactions WHERE kind = 'payout_return' AND rail_ref = $1`,
      [vnd.txnId],
    )
    expect(rows).toEqual([{ state: 'completed' }])
    const r = await report()
    expect(rail(r, 'bank')).toMatchObject({
      delta: before.delta,
      ledger: before.ledger,
      reported: before.reported,
    })
    expect(r.orphans.filter((o) => o.ref === vnd.bankRef || o.ref === vnd.txnId)).toEqual([])
  })
})
